/** What the HTTP listener serves of a bot: its runtime, its store and its webhook settings. */
import type { BotConfig } from "../config/schema.ts";
import type { HttpBot } from "../http/http-listener.ts";
import type { StateStore } from "../state/state-store.ts";
import type { BotRuntime } from "./bot-runtime.ts";

/**
 * `runtime`, run under the config entry `entry` with `store`, as the HTTP listener serves it;
 * `commit`: the daemon's store's.
 */
export function httpBotOf(
  runtime: BotRuntime,
  entry: BotConfig,
  store: StateStore,
  commit: () => Promise<void>,
): HttpBot {
  const { outgoing_webhook: o, handler_timeout, webhooks } = entry;
  return {
    runtime,
    store,
    commit,
    handlerTimeoutMs: handler_timeout,
    webhooks: webhooks ?? {},
    ...(o ? { outgoing: { path: o.path, token: o.token, replyDeadlineMs: o.reply_deadline } } : {}),
  };
}
