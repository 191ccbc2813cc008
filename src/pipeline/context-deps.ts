/** What every context of a bot is built from, made once per identity of the bot. */
import type { ServerInfo } from "../api/server-info.ts";
import type { ContextDeps } from "./context.ts";
import type { DispatcherOptions } from "./dispatcher.ts";
import type { BotIdentity } from "./incoming.ts";

export function contextDepsOf(
  o: DispatcherOptions,
  server: ServerInfo,
  self: BotIdentity | undefined,
): ContextDeps<unknown> {
  return {
    bot: { name: o.name, userId: self?.userId ?? -1, email: self?.email ?? o.client.email },
    api: o.client,
    state: o.state,
    log: o.log,
    settings: o.settings,
    server,
    channelName: (id) => o.services.channels.nameOf(id),
    ...(o.clock ? { clock: o.clock } : {}),
    services: o.services,
  };
}
