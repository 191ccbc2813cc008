/**
 * The sender side of typing notifications: show "typing…" while a piece of work runs.
 *
 * Rules (seed, "Sending side rules"): send `start` when the work begins; repeat `start` every
 * `server_typing_started_wait_period_milliseconds` while it runs; send `stop` when it ends, throws
 * or is cancelled, but only if a `start` was sent. A typing request that fails never fails the work.
 */
import { type Clock, realClock, type TimerHandle } from "../../time/clock.ts";

export type TypingOp = "start" | "stop";

/** Sends one typing notification for a fixed conversation (the client's `POST /typing`). */
export type SetTyping = (op: TypingOp, signal?: AbortSignal) => Promise<void>;

export interface TypingDuringOptions {
  /** How often to repeat `start`: `server_typing_started_wait_period_milliseconds` (default 30000; 10000 before FL 204). */
  startedWaitMs?: number;
  clock?: Clock;
  /** Cancels the work: `fn` sees it through its own signal, and `stop` is still sent. */
  signal?: AbortSignal;
  /** A typing request failed (ignored otherwise; it never fails the work). */
  onError?: (error: unknown, op: TypingOp) => void;
}

/**
 * Runs `fn` while showing the bot as typing, and returns (or throws) what `fn` does.
 *
 * @example
 * ```ts
 * const answer = await typingDuring(
 *   (op, signal) => client.typing.set({ op, type: "direct", to: [userId] }, { signal }),
 *   (signal) => slowLookup(question, { signal }),
 *   { startedWaitMs: register.server_typing_started_wait_period_milliseconds },
 * );
 * ```
 */
export async function typingDuring<T>(
  setTyping: SetTyping,
  fn: (signal: AbortSignal) => Promise<T>,
  options: TypingDuringOptions = {},
): Promise<T> {
  const { clock = realClock, startedWaitMs = 30_000, signal: outer, onError } = options;
  outer?.throwIfAborted();
  // Aborted when the work ends (cancelling a start still in flight) or when the caller cancels.
  const controller = new AbortController();
  const forwardAbort = () => controller.abort(outer?.reason);
  outer?.addEventListener("abort", forwardAbort, { once: true });

  const send = async (op: TypingOp, signal?: AbortSignal) => {
    try {
      await setTyping(op, signal);
    } catch (error) {
      try {
        onError?.(error, op);
      } catch {
        // The error hook is for reporting only; nothing it does may fail the work.
      }
    }
  };

  let inFlight: Promise<void> | undefined;
  let startSent = false;
  let timer: TimerHandle | undefined;
  const sendStart = () => {
    if (inFlight !== undefined) return; // the previous start is still on its way; this one adds nothing
    startSent = true;
    inFlight = send("start", controller.signal).finally(() => {
      inFlight = undefined;
    });
  };
  const repeat = () => {
    timer = clock.setTimeout(() => {
      sendStart();
      repeat();
    }, startedWaitMs);
  };

  sendStart();
  repeat();
  try {
    return await fn(controller.signal);
  } finally {
    if (timer !== undefined) clock.clearTimeout(timer);
    outer?.removeEventListener("abort", forwardAbort);
    controller.abort(new Error("The work is done; typing is no longer needed."));
    // Let an aborted start settle first, so the server cannot see our stop before it.
    await inFlight;
    if (startSent) await send("stop");
  }
}
