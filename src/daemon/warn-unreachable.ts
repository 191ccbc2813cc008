/** The warning for a bot whose inbound webhooks no listener serves. */
import type { Logger } from "pino";

/** Warns of inbound webhooks declared where the config has no listener to serve them. */
export function warnUnreachable(log: Logger, webhooks: ReadonlyMap<string, unknown>): void {
  if (webhooks.size === 0) return;
  log.warn(
    { webhooks: [...webhooks.keys()] },
    'the bot declares inbound webhooks, but the config has no http: listener, so they cannot be reached: add http: { listen: "127.0.0.1:8080" }',
  );
}
