/** What `bot.webhook()` declares in a bot's setup. */

/** How an inbound webhook request is authenticated (see the README's webhook section). */
export type WebhookVerify =
  | { type: "github"; secret: string }
  | { type: "hmac"; secret: string; header?: string; timestampHeader?: string; toleranceSeconds?: number }
  | { type: "bearer"; token: string }
  | { type: "secret"; secret: string; header?: string }
  | { type: "none" };

/** An inbound webhook of `bot.webhook`: how requests are verified, and its body limit. */
export interface WebhookOptions {
  verify: WebhookVerify;
  /** Where to read an idempotency key to drop repeats, e.g. a header name like `x-github-delivery`. */
  idempotencyHeader?: string;
  /** Largest body accepted, in bytes (default 1 MiB). */
  maxBodyBytes?: number;
}
