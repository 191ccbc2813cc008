/**
 * Whether an inbound webhook request has room to run: a bound on the bot's handlers running at
 * once, and on how long a handler's call may wait for the account's call budget. A request is
 * refused (503 with `Retry-After`) only when its handler makes a call whose wait would not end
 * its margin ({@link callMarginMs}) before the request's deadline (see {@link requestDeadline}): a
 * handler that makes no call to the chat server (it keeps state, or answers in the HTTP reply
 * alone) runs whatever the budget.
 */
import { watchBudgetWaits } from "../api/budget-waits.ts";
import type { Clock } from "../time/clock.ts";
import type { WebhookRuntime } from "./webhook-runtime.ts";

/**
 * How long a sender waits for a webhook's answer, counted from the request's arrival, when the
 * config's `webhooks.<name>.sender_timeout` does not say: GitHub gives up on a delivery at 10 s
 * (and marks it failed, even if the bot handled it later). Slack waits 3 s, and needs the setting.
 */
export const WEBHOOK_SENDER_DEADLINE_MS = 10_000;

/**
 * The time a call left waiting for the budget keeps before the request's deadline, for the call
 * itself and the answer, when its sender waits `senderTimeoutMs`: a fifth of that, at most 2 s.
 * So GitHub's 10 s keep 2 s, and Slack's 3 s keep 0.6 s, a call there still waiting up to 2.4 s
 * after the arrival; a more patient sender keeps 2 s, as a call takes no longer for it. A wait
 * that ends later is refused at once rather than made.
 */
export function callMarginMs(senderTimeoutMs: number): number {
  return Math.min(2_000, Math.round(senderTimeoutMs / 5));
}

/**
 * When a request that arrived at `arrivedAt` must be answered (epoch ms): its sender's deadline
 * (`senderTimeoutMs` after its arrival), or its handler's timeout (started at `handlerStartedAt`)
 * if that ends sooner.
 */
export function requestDeadline(
  arrivedAt: number,
  senderTimeoutMs: number,
  handlerStartedAt: number,
  handlerTimeoutMs: number,
): number {
  return Math.min(arrivedAt + senderTimeoutMs, handlerStartedAt + handlerTimeoutMs);
}

/** Requests of one bot whose handlers run at once, past which another is refused (503). */
export const WEBHOOK_RUNS_PER_BOT = 64;

/** Why a request is answered 503, and the seconds after which a retry may find room. */
export interface NoRoom {
  error: string;
  retryAfterS: number;
}

/** The reason a handler's signal aborts with when its call would wait too long for the budget. */
export class BudgetRefusal extends Error {
  constructor(readonly answer: NoRoom) {
    super(answer.error);
  }
}

/** The refusal of a request to `bot` finding `runs` of its handlers running; undefined while there is room. */
export function crowded(bot: string, runs: number): NoRoom | undefined {
  if (runs < WEBHOOK_RUNS_PER_BOT) return undefined;
  return {
    error: `bot ${bot} is handling ${runs} webhook requests already; try again shortly`,
    retryAfterS: 1,
  };
}

/** When a call of `runtime`'s asking at `now` could start, by its account's budget (`now`: at once, or not known yet). */
function budgetStartAt(runtime: WebhookRuntime, now: number): number {
  let budget: ReturnType<WebhookRuntime["contextDeps"]>["api"]["budget"]["other"];
  try {
    budget = runtime.contextDeps().api.budget.other;
  } catch {
    // Not registered yet: the call itself reports that.
    return now;
  }
  return budget.enforced ? Math.max(now, budget.nextStartAt(now)) : now;
}

/**
 * Aborts `controller` with a {@link BudgetRefusal} when a call made with `signal` (the handler's)
 * begins a wait for the account's budget that would end less than `marginMs` before `deadline`
 * (epoch ms on `clock`): the request is then answered 503 at once, before its sender gives up,
 * rather than held while its handler waits.
 */
export function refuseLongBudgetWaits(
  runtime: WebhookRuntime,
  signal: AbortSignal,
  controller: AbortController,
  clock: Clock,
  deadline: number,
  marginMs: number,
) {
  watchBudgetWaits(signal, {
    began: () => {
      const now = clock.now();
      const startAt = budgetStartAt(runtime, now);
      if (startAt <= now || startAt <= deadline - marginMs) return;
      const retryAfterS = Math.max(1, Math.ceil((startAt - now) / 1000));
      const error = `bot ${runtime.name}'s account is at its rate limit for calls to the chat server; try again in ${retryAfterS} s`;
      controller.abort(new BudgetRefusal({ error, retryAfterS }));
    },
    ended: () => {},
  });
}
