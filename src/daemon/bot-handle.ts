/**
 * The `bot` object a module's `setup` receives, backed by a Composer. It also records which
 * event types the module handles, which is what the bot subscribes to unless told otherwise.
 */
import type { Logger } from "pino";
import type { Client } from "../api/create-client.ts";
import type { BotApi } from "../bot/bot-api.ts";
import { Composer } from "../router/composer.ts";
import type { KV } from "../state/kv.ts";
import type { BotContext } from "./context.ts";

export interface BotHandle<S> {
  api: BotApi<S>;
  composer: Composer<BotContext<S>>;
  /** Event types passed to `on()`; contains "*" if any route takes every type. */
  handledTypes: Set<string>;
}

export function createBotHandle<S>(deps: {
  name: string;
  log: Logger;
  client: Client;
  state: KV;
}): BotHandle<S> {
  const composer = new Composer<BotContext<S>>();
  const handledTypes = new Set<string>();
  const api: BotApi<S> = {
    name: deps.name,
    log: deps.log,
    api: deps.client,
    state: deps.state,
    on(type: string | readonly string[], a: unknown, b?: unknown) {
      for (const t of Array.isArray(type) ? type : [type]) handledTypes.add(t);
      // The composer validates the arguments and throws a RouterError naming what is wrong.
      const on = composer.on.bind(composer) as (...args: unknown[]) => unknown;
      if (b === undefined) on(type, a);
      else on(type, a, b);
      return api;
    },
    use(...middleware) {
      composer.use(...middleware);
      return api;
    },
    catch(handler) {
      composer.catch(handler);
      return api;
    },
  } as BotApi<S>;
  return { api, composer, handledTypes };
}
