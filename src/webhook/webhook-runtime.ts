/** What `bot.webhook()` declares in a bot's setup, and what the HTTP side needs of a bot runtime. */
import type { ServerInfo } from "../api/server-info.ts";
import type { ContextDeps, SendEffects, WebhookContext } from "../pipeline/context.ts";
import type { ReplyFn, RunHandler } from "../pipeline/incoming.ts";
import type { ServerEvent } from "../wire/events.ts";
import type { KeptWhy } from "./reply-exchange.ts";

/** How an inbound webhook request is authenticated (see docs/guide/webhooks.md). */
export type WebhookVerify =
  | { type: "github"; secret: string }
  | { type: "hmac"; secret: string; header?: string; timestampHeader?: string; toleranceSeconds?: number }
  | { type: "slack"; secret: string; toleranceSeconds?: number }
  | { type: "bearer"; token: string }
  | { type: "secret"; secret: string; header?: string }
  | { type: "none" };

/** An inbound webhook of `bot.webhook`: how requests are verified, and its body limit. */
export interface WebhookOptions {
  verify: WebhookVerify;
  /**
   * Where to read an idempotency key to drop repeats, e.g. a header name like `x-github-delivery`;
   * a key is remembered for the config's `webhooks.<name>.idempotency_window` (default 3 days).
   */
  idempotencyHeader?: string;
  /**
   * Reads the idempotency key from a verified request instead (e.g. the event id in Stripe's
   * body): the key, or `undefined` when the request has none. A throw or any other value refuses
   * the request (400). Not together with `idempotencyHeader`.
   */
  idempotencyKey?: (request: WebhookKeySource) => string | undefined;
  /** Largest body accepted, in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /**
   * A JSON body must be an object: one that parses to anything else (`null`, an array, a string, a
   * number, a boolean) is refused (422) before the handler runs. A form body, or none, passes.
   */
  objectBody?: boolean;
}

/** What a webhook's `idempotencyKey` reads: the request as its handler gets it, but its key. */
export type WebhookKeySource = Omit<WebhookContext["request"], "idempotencyKey">;

/** A `bot.webhook(name, options, handler)` declaration. */
export interface WebhookDeclaration<S = unknown> {
  options: WebhookOptions;
  handler: (ctx: WebhookContext<S>) => unknown;
}

export interface WebhookRuntime {
  readonly name: string;
  readonly status: { readonly state: string; readonly server: ServerInfo | undefined };
  /**
   * Calls `listener` each time the bot becomes ready for deliveries (`status.state` "webhook");
   * returns what unsubscribes it.
   */
  onReady(listener: () => void): () => void;
  /**
   * Keep `event`, a delivery about to be answered while its message is not handled, durably as a
   * dead letter marked for replay: one that came while the bot is not ready, run once it is, at
   * this start or the next; one whose handler still runs here (`running`; `why` it was answered
   * meanwhile, see {@link KeptWhy}), replayed at the next start only, unless that run settles it
   * first ({@link settleDelivery}). Resolves the letter's id once written;
   * undefined when the bot keeps no dead letters. `again`: an earlier write of it failed (its
   * letter may have landed: then that one is taken).
   */
  keepDelivery(
    event: ServerEvent,
    options?: { again?: boolean; running?: boolean; why?: KeptWhy },
  ): Promise<string | undefined>;
  /**
   * The run of a delivery kept with `running` is over: its letter `id` goes once its message
   * `messageId` is recorded as handled (true: handled, or failed and kept as usual); else it stays
   * for the next start (false: the run timed out, or the stop cut it off). With `id` undefined (a
   * write of it reported failed, which may have landed), any letter of `messageId` marked as this
   * daemon's run goes.
   */
  settleDelivery(id: string | undefined, messageId: number): Promise<boolean>;
  /**
   * Hand an event to the bot's dispatch pipeline; true once its handlers finished. `repeatable`:
   * the server repeats it should a crash cut its answer off (its run may be a run again);
   * `beforeAsking`: awaited before its run sends a dialog's question.
   */
  deliver(
    event: ServerEvent,
    options?: { reply?: ReplyFn; repeatable?: boolean; beforeAsking?: () => Promise<void> },
  ): Promise<boolean>;
  contextDeps(): ContextDeps<unknown>;
  /** The pipeline's run stage, where an inbound webhook's handler runs. */
  readonly runHandler: RunHandler;
  /**
   * The records a run's sends go through under `key` (an inbound request's idempotency key), kept
   * `keptMs`; their read-backs go back to when the first run of `key` began (`nowMs` for the first).
   */
  sendEffects(key: string, nowMs: number, keptMs?: number): Promise<SendEffects>;
  readonly declarations: { readonly webhooks: ReadonlyMap<string, WebhookDeclaration> };
}
