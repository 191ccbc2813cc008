/**
 * A verified inbound webhook request's idempotency key: read from its declared header, or by its
 * webhook's `idempotencyKey` function; and the warning said once when the declared header is missing.
 */
import type { Logger } from "pino";
import type { WebhookKeySource, WebhookOptions } from "./webhook-runtime.ts";

/**
 * A verified request's idempotency key: its `idempotencyHeader`'s value (none if empty), or what
 * the webhook's `idempotencyKey` returns (`undefined`: the request has none); else why none could
 * be read.
 */
export function readKey(options: WebhookOptions, source: WebhookKeySource) {
  if (options.idempotencyKey === undefined) {
    const value = options.idempotencyHeader
      ? source.headers[options.idempotencyHeader.toLowerCase()]
      : undefined;
    const key = Array.isArray(value) ? value[0] : value;
    // An empty header is none: else every request sending one would share the key "".
    return key === "" ? undefined : key;
  }
  let key: unknown;
  try {
    key = options.idempotencyKey(source);
  } catch (err) {
    return { reason: "threw", err };
  }
  if (key === undefined || (typeof key === "string" && key !== "")) return key;
  // An async function's promise: its key comes too late, and its rejection must not go unhandled.
  if (key instanceof Promise) key.catch(() => {});
  const got =
    key === "" || key === null
      ? JSON.stringify(key)
      : key instanceof Promise
        ? "a Promise"
        : typeof key === "object"
          ? "an object"
          : `a ${typeof key}`;
  return { reason: `returned ${got}, not a non-empty string or undefined`, err: undefined };
}

/** The webhooks whose `idempotencyHeader` a request lacked, said once each (a process's). */
const headerMissingSaid = new WeakSet<WebhookOptions>();

/**
 * A verified request without the declared `idempotencyHeader` at all: said once per webhook, as
 * a misspelt header name leaves every request keyless (each redelivery handled again). The
 * request's header names (never their values) show what the sender sends.
 */
export function noHeaderOnce(
  options: WebhookOptions,
  source: WebhookKeySource,
  log: Pick<Logger, "warn">,
): void {
  const header = options.idempotencyHeader;
  if (header === undefined || header.toLowerCase() in source.headers || headerMissingSaid.has(options))
    return;
  headerMissingSaid.add(options);
  log.warn(
    { header, headers: Object.keys(source.headers).slice(0, 30) },
    "webhook request without its idempotencyHeader: handled without a key, so a redelivery of it would be handled again; is the header's name the one the sender sends? (said once)",
  );
}
