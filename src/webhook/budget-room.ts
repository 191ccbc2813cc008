/**
 * Whether an inbound webhook request has room to run: a bound on the bot's handlers running at
 * once, and on how long a handler's call may wait for the account's call budget. A request is
 * refused (503 with `Retry-After`) only when its handler makes a call that would wait longer than
 * {@link WEBHOOK_BUDGET_WAIT_MS}: a handler that makes no call to the chat server (it keeps state,
 * or answers in the HTTP reply alone) runs whatever the budget.
 */
import { watchBudgetWaits } from "../api/budget-waits.ts";
import type { WebhookRuntime } from "./webhook-runtime.ts";

/**
 * A call's wait for the account's call budget past which a webhook request is refused (503) rather
 * than held: senders give up on a delivery after about 10 s (GitHub), so a held request would only
 * keep its connection open for nothing.
 */
export const WEBHOOK_BUDGET_WAIT_MS = 10_000;

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

/** How long a call of `runtime`'s asking now would wait for its account's budget (0: none, or not known yet). */
function budgetWaitMs(runtime: WebhookRuntime): number {
  let budget: ReturnType<WebhookRuntime["contextDeps"]>["api"]["budget"]["other"];
  try {
    budget = runtime.contextDeps().api.budget.other;
  } catch {
    // Not registered yet: the call itself reports that.
    return 0;
  }
  const now = budget.clock.now();
  return budget.enforced ? Math.max(0, budget.nextStartAt(now) - now) : 0;
}

/**
 * Aborts `controller` with a {@link BudgetRefusal} when a call made with `signal` (the handler's)
 * begins a wait for the account's budget longer than {@link WEBHOOK_BUDGET_WAIT_MS}: the request
 * is then answered 503 rather than held while its handler waits.
 */
export function refuseLongBudgetWaits(
  runtime: WebhookRuntime,
  signal: AbortSignal,
  controller: AbortController,
) {
  watchBudgetWaits(signal, {
    began: () => {
      const waitMs = budgetWaitMs(runtime);
      if (waitMs <= WEBHOOK_BUDGET_WAIT_MS) return;
      const retryAfterS = Math.ceil(waitMs / 1000);
      const error = `bot ${runtime.name}'s account is at its rate limit for calls to the chat server; try again in ${retryAfterS} s`;
      controller.abort(new BudgetRefusal({ error, retryAfterS }));
    },
    ended: () => {},
  });
}
