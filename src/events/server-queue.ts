/**
 * What a bot's queue asks of the server, over the bot's client: its identity from a register
 * response, and the queue calls the consumer makes.
 */
import { watchBudgetWaits } from "../api/budget-waits.ts";
import type { Client } from "../api/create-client.ts";
import { isRateLimitError } from "../api/errors.ts";
import type { BotIdentity } from "../pipeline/incoming.ts";
import type { RegisterResponse } from "../wire/responses.ts";

/** What the consumer needs from the server: a boundary the runtime adapts the client to. */
export interface QueueApi {
  register(signal: AbortSignal): Promise<RegisterResponse>;
  poll(
    queueId: string,
    lastEventId: number,
    opts: { signal: AbortSignal; timeoutMs: number },
  ): Promise<unknown[]>;
  deleteQueue(queueId: string): Promise<void>;
}

/**
 * The bot's user from a register response, which carries it on recent servers; else the one
 * already `known`, else asked for.
 */
export async function identityOf(
  reg: RegisterResponse,
  client: Client,
  known?: BotIdentity,
): Promise<BotIdentity> {
  if (reg.user_id !== undefined && reg.email !== undefined) {
    const name = reg.full_name ?? known?.fullName;
    return { userId: reg.user_id, email: reg.email, ...(name !== undefined ? { fullName: name } : {}) };
  }
  if (known) return known;
  const me = await client.users.me();
  return { userId: me.user_id, email: me.email, fullName: me.full_name };
}

/**
 * The queue consumer's view of the server, over one bot's client. Polls are not marked
 * idempotent: the consumer, not the client, decides how to recover (backoff, watchdog, new queue).
 * A 429 the client hands on (its wait longer than the client waits, the account's hour spent) is
 * waited out by the consumer, for the `retry-after` asked: told to `waits` as it begins, as the
 * client tells its own waits.
 */
export function queueApiFor(
  client: Client,
  register: (signal: AbortSignal) => Promise<RegisterResponse>,
  waits?: (ms: number) => void,
): QueueApi {
  const told = <T>(call: Promise<T>): Promise<T> =>
    call.catch((err: unknown) => {
      if (isRateLimitError(err)) waits?.(err.retryAfterMs);
      throw err;
    });
  return {
    register: (signal) => told(register(signal)),
    poll: (queue_id, last_event_id, { signal, timeoutMs }) =>
      told(
        client.request<{ events?: unknown }>(
          "GET",
          "/events",
          { queue_id, last_event_id },
          { signal, timeoutMs, idempotent: false },
        ),
      ).then(eventsOf),
    deleteQueue: (queueId) => client.events.deleteQueue(queueId, { signal: withoutBudgetWait() }),
  };
}

/**
 * A signal that ends the call it is given to instead of letting it wait for the account's rate
 * budget (or a 429's pause): deleting a queue is a courtesy, as the server deletes an idle queue
 * itself, and a stop at the account's limit would otherwise wait for the limit's window.
 */
function withoutBudgetWait(): AbortSignal {
  const noWait = new AbortController();
  watchBudgetWaits(noWait.signal, {
    began: () =>
      noWait.abort(new Error("the account's rate budget is spent: the server deletes the idle queue itself")),
    ended: () => {},
  });
  return noWait.signal;
}

const eventsOf = (body: { events?: unknown }): unknown[] => (Array.isArray(body.events) ? body.events : []);
