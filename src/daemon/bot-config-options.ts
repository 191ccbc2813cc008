/** A bot's config entry as the options of its runtime (the parts the YAML decides). */
import type { BotConfig } from "../config/schema.ts";
import type { BotRuntimeOptions } from "./bot-runtime-options.ts";

export function optionsFromConfig(
  c: BotConfig,
): Pick<
  BotRuntimeOptions,
  | "events"
  | "narrow"
  | "allPublicStreams"
  | "ownMessages"
  | "concurrency"
  | "handlerTimeoutMs"
  | "replay"
  | "longMessages"
  | "mode"
  | "retries"
> {
  return {
    ...(c.events ? { events: c.events } : {}),
    ...(c.narrow ? { narrow: c.narrow.map(([op, operand]) => [op, operand] as [string, string]) } : {}),
    ...(c.all_public_streams !== undefined ? { allPublicStreams: c.all_public_streams } : {}),
    ownMessages: c.own_messages,
    concurrency: c.concurrency,
    handlerTimeoutMs: c.handler_timeout,
    replay: { maxMessages: c.replay.max_messages, maxAgeMs: c.replay.max_age },
    longMessages: c.long_messages,
    ...(c.outgoing_webhook ? { mode: "webhook" as const } : {}),
    retries: {
      attempts: c.retries.attempts,
      backoffMs: c.retries.backoff,
      maxBackoffMs: c.retries.max_backoff,
    },
  };
}
