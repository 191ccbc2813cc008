/**
 * The three typing intervals, from the register response (fetched with `realm`), with the
 * server's defaults when absent: 45000 / 12000 / 30000 ms, or 15000 / 5000 / 10000 ms on
 * servers before feature level 204, which do not send them (NOTES §8).
 */
import type { RegisterResponse } from "../../wire/responses.ts";

/** Feature level from which the register response carries the typing intervals. */
export const TYPING_TIMINGS_FEATURE_LEVEL = 204;

export interface TypingTimings {
  /** Receivers hide an indicator after this long without a new `start`. */
  startedExpiryMs: number;
  /** Senders send `stop` after the compose box has been idle this long. */
  stoppedWaitMs: number;
  /** Senders repeat `start` this often while composing. */
  startedWaitMs: number;
}

type TimingFields = Pick<
  RegisterResponse,
  | "server_typing_started_expiry_period_milliseconds"
  | "server_typing_stopped_wait_period_milliseconds"
  | "server_typing_started_wait_period_milliseconds"
>;

/**
 * Typing intervals from (part of) a register response.
 *
 * @example
 * ```ts
 * const { startedExpiryMs } = typingTimings(register); // 45000 on a current server
 * typingTimings({ zulip_feature_level: 150 }); // { startedExpiryMs: 15000, stoppedWaitMs: 5000, startedWaitMs: 10000 }
 * ```
 */
export function typingTimings(
  register: Partial<TimingFields> & { zulip_feature_level?: number },
): TypingTimings {
  const old =
    register.zulip_feature_level !== undefined && register.zulip_feature_level < TYPING_TIMINGS_FEATURE_LEVEL;
  return {
    startedExpiryMs: register.server_typing_started_expiry_period_milliseconds ?? (old ? 15_000 : 45_000),
    stoppedWaitMs: register.server_typing_stopped_wait_period_milliseconds ?? (old ? 5_000 : 12_000),
    startedWaitMs: register.server_typing_started_wait_period_milliseconds ?? (old ? 10_000 : 30_000),
  };
}
