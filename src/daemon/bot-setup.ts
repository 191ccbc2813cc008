/**
 * A bot's setup as its runtime (bot-runtime.ts) runs it: the module's `setup` given a live bot
 * handle, within the handler timeout, and what comes of it: the declarations kept past setup, the
 * pipeline built around its handlers, the event types its queue subscribes to, the channels and
 * groups its settings name.
 */
import { type BotHandle, createBotHandle, type Refusals } from "../bot/bot-handle.ts";
import type { AccountBot } from "../bot/commands/shared-account.ts";
import { type NamedEntry, namedIn } from "../bot/named-settings.ts";
import type { Dispatcher } from "../pipeline/dispatcher.ts";
import type { BotRuntimeOptions } from "./bot-runtime-options.ts";
import { runSetup, undeclaredWebhook } from "./trial-setup.ts";
import { type BotParts, warnUnreachable } from "./wire-bot.ts";

/** What the module's `setup` declared, and the pipeline built around its handlers. */
export interface SetUp {
  /** What `setup` declared: kept apart from the `bot` handle, which need not outlive setup. */
  declarations: Pick<BotHandle<unknown>, "recurring" | "cronJobs" | "webhooks" | "startHandlers">;
  dispatcher: Dispatcher;
  /** The bot as the daemon's other bots on its account see it while it runs. */
  member: AccountBot;
  /** The event types to subscribe to (`null`: all). */
  eventTypes: string[] | null;
  /** The channels and groups its settings name (named-settings.ts): looked up at each start. */
  named: NamedEntry[];
}

/** The declarations of a bot that made none (never written to: setup is over when they are read). */
const NONE: SetUp["declarations"] = {
  recurring: new Map(),
  cronJobs: [],
  webhooks: new Map(),
  startHandlers: [],
};

/** Run the module's `setup` of bot `o.name`, built from `parts`, until done or `signal` aborts. */
export async function setUpBot(
  o: BotRuntimeOptions,
  parts: Pick<BotParts, "kv" | "dispatcher" | "scheduler">,
  signal: AbortSignal,
): Promise<SetUp> {
  const { name } = o;
  const refusals: Refusals = { list: [], goOn: false };
  const handle = createBotHandle<unknown>({
    name,
    log: o.log,
    client: o.client,
    state: parts.kv,
    schedule: () => parts.scheduler.schedule,
    commandPrefix: o.commandPrefix,
    account: o.account?.shared,
    refusals,
  });
  // Bounded: a setup that never finishes fails the bot (SETUP_TIMEOUT) instead of holding it.
  const { handlerTimeoutMs: timeoutMs, clock } = o;
  await runSetup({ ...o, name, timeoutMs, clock, signal }, handle.api, refusals);
  const declared = o.events ?? o.definition.events ?? [...handle.handledTypes];
  // Recurring announcements follow their bookings through scheduled_messages events, and the
  // renames of the channels they name through stream events (the cached name's id is dropped).
  const types = handle.recurring.size > 0 ? [...declared, "scheduled_messages", "stream"] : declared;
  // "*" and "unknown" routes need every type the server sends; bothost makes "gap" itself.
  const all = types.includes("*") || types.includes("unknown");
  const { recurring, cronJobs, webhooks, startHandlers } = handle;
  const undeclared = undeclaredWebhook(name, o.webhookNames, webhooks);
  if (undeclared) throw undeclared;
  if (o.noListener) warnUnreachable(o.log, webhooks);
  return {
    // Kept past setup: most bots declare none of them, and share the empty ones.
    declarations: {
      recurring: recurring.size > 0 ? recurring : NONE.recurring,
      cronJobs: cronJobs.length > 0 ? cronJobs : NONE.cronJobs,
      webhooks: webhooks.size > 0 ? webhooks : NONE.webhooks,
      startHandlers: startHandlers.length > 0 ? startHandlers : NONE.startHandlers,
    },
    dispatcher: parts.dispatcher(handle.composer, handle.commands),
    member: { order: o.account?.order ?? 0, commands: handle.commands },
    eventTypes: all ? null : [...new Set(types)].filter((t) => t !== "gap"),
    named: namedIn(o.definition.settings, o.settings, ["bots", name, "settings"]),
  };
}
