import type { Logger } from "pino";
import type { Client } from "../api/create-client.ts";
import { trackedEventTypes } from "../effects/context-helpers.ts";
import { createScheduleApi, type ScheduleApi } from "../effects/schedule/schedule-api.ts";
import { type BothostError, isBothostError } from "../errors/bothost-error.ts";
import { whereThrown } from "../errors/where-thrown.ts";
import { Composer } from "../pipeline/composer.ts";
import type { BaseContext, BotContext, JobContext, WebhookContext } from "../pipeline/context.ts";
import { loudAfterError } from "../pipeline/run-log.ts";
import { cronProblem, recurringProblem } from "../scheduler/check-declarations.ts";
import type { KV } from "../state/kv.ts";
import type { BotApi, CronOptions, RecurringAnnouncement, WebhookOptions } from "./bot-api.ts";
import { checkWebhook } from "./check-webhook.ts";
import { CommandRouter } from "./commands/command-router.ts";
import type { SharedAccount } from "./commands/shared-account.ts";
import { BotSetupError, notePlace } from "./setup-error.ts";

export { BotSetupError };

export interface BotHandle<S> {
  api: BotApi<S>;
  composer: Composer<BotContext<S>>;
  /** Event types passed to `on()`; contains "*" if any route takes every type. */
  handledTypes: Set<string>;
  /** `bot.recurring()` declarations by id. */
  recurring: Map<string, RecurringAnnouncement>;
  /** `bot.cron()` declarations, in order. */
  cronJobs: { expression: string; options: CronOptions; handler: (ctx: JobContext<S>) => unknown }[];
  /** `bot.onStart()` handlers, in order. */
  startHandlers: ((ctx: BaseContext<S>) => unknown)[];
  /** `bot.webhook()` declarations by name. */
  webhooks: Map<string, { options: WebhookOptions; handler: (ctx: WebhookContext<S>) => unknown }>;
  /** `bot.command()` declarations; `undefined` until the first. */
  readonly commands: CommandRouter | undefined;
}

/**
 * The `bot` a module's `setup` receives, backed by a Composer. It records the event types the
 * module handles: what the bot subscribes to unless told otherwise.
 */
export function createBotHandle<S>(deps: {
  name: string;
  log: Logger;
  client: Client;
  state: KV;
  /** Makes `bot.schedule` on its first use; default one over `client` on the real clock. */
  schedule?: () => ScheduleApi;
  /** The config's `command_prefix` (e.g. `"!"`): commands also work in messages that start with it. */
  commandPrefix?: string | undefined;
  /** The other bots of the daemon on this bot's account, whose commands this bot's answer with. */
  account?: SharedAccount | undefined;
  /** Each declaration bothost refuses is added here; with `goOn`, the call returns `bot` instead of throwing. */
  refusals?: Refusals | undefined;
}): BotHandle<S> {
  let commands: CommandRouter | undefined;
  let schedule: ScheduleApi | undefined;
  const composer = new Composer<BotContext<S>>();
  const handledTypes = new Set<string>();
  const recurring = new Map<string, RecurringAnnouncement>();
  const cronJobs: BotHandle<S>["cronJobs"] = [];
  const webhooks: BotHandle<S>["webhooks"] = new Map();
  const startHandlers: BotHandle<S>["startHandlers"] = [];
  const api: BotApi<S> = {
    name: deps.name,
    log: deps.log,
    api: deps.client,
    state: deps.state,
    // Made on first use: a daemon holds a bot per config entry, and few use bot.schedule.
    get schedule() {
      schedule ??= deps.schedule?.() ?? createScheduleApi({ client: deps.client });
      return schedule;
    },
    on(type: string | readonly string[], a: unknown, b?: unknown) {
      for (const t of Array.isArray(type) ? type : [type]) handledTypes.add(t);
      const on = composer.on as (...args: unknown[]) => unknown;
      on.apply(composer, b === undefined ? [type, a] : [type, a, b]);
      return api;
    },
    use(...middleware) {
      composer.use(...middleware);
      return api;
    },
    catch(handler) {
      // The handler logs what it sees even of an error a dialog's replay threw (run-log.ts); a
      // value that is no function goes to the composer as it is, which refuses it by name.
      composer.catch(
        typeof handler === "function"
          ? (err, ctx) => {
              loudAfterError(ctx as BotContext<unknown>);
              return handler(err, ctx);
            }
          : handler,
      );
      return api;
    },
    recurring(id, announcement) {
      if (typeof id !== "string" || !/^[A-Za-z0-9][\w.-]{0,63}$/.test(id)) {
        throw new BotSetupError(
          `bot.recurring(${JSON.stringify(id)}): the id must be 1-64 letters, digits, ".", "_" or "-".`,
        );
      }
      if (recurring.has(id))
        throw new BotSetupError(`bot.recurring("${id}"): an announcement with this id exists already.`);
      const problem = recurringProblem(id, announcement);
      if (problem) throw new BotSetupError(problem);
      recurring.set(id, announcement);
      return api;
    },
    cron(expression: string, options: unknown, handler?: unknown) {
      // The options may be left out: bot.cron(expression, handler).
      const [o, h] =
        typeof options === "function" && handler === undefined ? [{}, options] : [options, handler];
      const where = `bot.cron(${JSON.stringify(expression)})`;
      if (typeof o === "function") {
        throw new BotSetupError(
          `${where}: the second argument is a function where the options were expected; call bot.cron(expression, handler) or bot.cron(expression, { timezone, missed, id }, handler).`,
        );
      }
      if (typeof h !== "function") {
        throw new BotSetupError(
          `${where}: the handler (the last argument) must be a function (ctx) => …, got ${h === null ? "null" : typeof h}.`,
        );
      }
      const problem = cronProblem(expression, o);
      if (problem) throw new BotSetupError(problem);
      cronJobs.push({ expression, options: (o ?? {}) as CronOptions, handler: h as never });
      return api;
    },
    command(name: string, options: unknown, handler?: unknown) {
      const [o, h] = handler === undefined ? [{}, options] : [options, handler];
      if (!commands) {
        commands = new CommandRouter(composer as never, {
          prefix: deps.commandPrefix,
          account: deps.account,
        });
        composer.use(commands.middleware as never);
      }
      commands.add(name, o as never, h);
      // Roles come from the users cache, groups from theirs: both kept current by events, and
      // each fetched whole at every registration, so only when a command checks them.
      handledTypes.add("message");
      if (commands.needs.users) handledTypes.add(trackedEventTypes.users);
      if (commands.needs.groups) handledTypes.add("user_group");
      return api;
    },
    onStart(handler) {
      if (typeof handler !== "function")
        throw new BotSetupError("bot.onStart(handler): the handler must be a function (ctx) => ….");
      startHandlers.push(handler);
      return api;
    },
    track(...helpers) {
      for (const helper of helpers) {
        if (!Object.hasOwn(trackedEventTypes, helper)) {
          const known = Object.keys(trackedEventTypes).map((h) => `"${h}"`);
          throw new BotSetupError(
            `bot.track(${JSON.stringify(helper)}): unknown helper; use ${known.join(", ")}.`,
          );
        }
        handledTypes.add(trackedEventTypes[helper]);
      }
      return api;
    },
    webhook(name, options, handler) {
      webhooks.set(name, { options: checkWebhook(name, options, handler, webhooks), handler });
      return api;
    },
  } as BotApi<S>;
  if (deps.refusals) noteRefusals(api, deps.refusals);
  return {
    api,
    composer,
    handledTypes,
    recurring,
    cronJobs,
    webhooks,
    startHandlers,
    get commands() {
      return commands;
    },
  };
}

/** The declarations a setup's refused calls are gathered from (see {@link Refusals}). */
const DECLARATIONS = [
  "on",
  "use",
  "catch",
  "recurring",
  "cron",
  "command",
  "onStart",
  "track",
  "webhook",
] as const;

/**
 * What a setup's declarations were refused: `list` gets each refusal. With `goOn` a refused call
 * returns `bot` and the setup goes on, so that a trial finds every wrong declaration at once, not
 * only the first (a setup's own try/catch around a declaration then sees nothing).
 */
export interface Refusals {
  list: BothostError[];
  goOn: boolean;
}

function noteRefusals<S>(api: BotApi<S>, refusals: Refusals): void {
  const methods = api as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of DECLARATIONS) {
    const declare = methods[name]!;
    methods[name] = (...args: unknown[]) => {
      try {
        return declare(...args);
      } catch (err) {
        if (!isBothostError(err)) throw err;
        notePlace(err, whereThrown(err)); // the setup's call, the first frame of the user's files
        refusals.list.push(err);
        if (!refusals.goOn) throw err;
        return api;
      }
    };
  }
}
