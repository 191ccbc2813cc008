import { type Config, LISTENER_NEEDED } from "../config/schema.ts";
import { BothostError } from "../errors/bothost-error.ts";

/** The HTTP side cannot start as configured; the message says what to change. */
export class HttpConfigError extends BothostError<"HTTP_CONFIG_INVALID" | "HTTP_LISTEN_FAILED"> {
  override readonly name = "HttpConfigError";
}

/** Throws when a bot of `config` has an outgoing webhook but the config has no `http` listener. */
export function requireListener(config: Pick<Config, "bots" | "http">): void {
  const webhookBot = Object.entries(config.bots).find(([, b]) => b.outgoing_webhook)?.[0];
  if (!config.http && webhookBot !== undefined) {
    throw new HttpConfigError(
      "HTTP_CONFIG_INVALID",
      `bots.${webhookBot}.outgoing_webhook ${LISTENER_NEEDED}.`,
    );
  }
}
