/**
 * A bot's `setup` tried before the bot runs: offline, with a bot object that only records what it
 * declares, a state in memory and a client that makes no call. `bothost check` tries every bot so,
 * and a reload every bot it adds, so that a setup that throws (a bad cron expression, a filter
 * typo, a command argument that is not a zod schema, the module's own code failing) is reported as
 * the user's mistake: one line naming the bot, its file and the problem, no stack trace.
 */
import { pino } from "pino";
import type { Client } from "../api/create-client.ts";
import { type BotHandle, createBotHandle, type Refusals } from "../bot/bot-handle.ts";
import type { BotDefinition } from "../bot/define-bot.ts";
import { BotSetupError, DeclarationsRefused, notePlace, refusalWords } from "../bot/setup-error.ts";
import { BothostError, isBothostError } from "../errors/bothost-error.ts";
import { suggest } from "../errors/did-you-mean.ts";
import { whereThrown } from "../errors/where-thrown.ts";
import { KV } from "../state/kv.ts";
import { MemoryStore } from "../state/memory-store.ts";
import type { Clock } from "../time/clock.ts";
import { withinSetupTime } from "./setup-deadline.ts";

/** Why a bot's setup failed, in one line. */
export interface SetupProblem {
  bot: string;
  /** The module as the config names it. */
  module: string;
  /** `bots.<name> (<module>): <problem>`. */
  line: string;
  /** True when bothost refused a declaration (`BOT_SETUP_INVALID`, `ROUTER_INVALID_FILTER`, …). */
  declaration: boolean;
}

/** What a trial needs of a bot. */
export interface TrialBot {
  name: string;
  module: string;
  definition: BotDefinition<never, never> | BotDefinition;
  settings: unknown;
  commandPrefix?: string | undefined;
  /** The bound on its setup (the bot's `handler_timeout`); none when absent. */
  timeoutMs?: number | undefined;
  /** The clock that bound passes on (a reload's trial: the daemon's); default real. */
  clock?: Clock | undefined;
  /** Ends the wait for setup early (the daemon stopping). */
  signal?: AbortSignal | undefined;
}

class OfflineCall extends BothostError<"SETUP_OFFLINE"> {
  constructor(readonly property: string) {
    super("SETUP_OFFLINE", `bot.api.${property} was used during setup`);
  }
}

/** Any use of the client ends the trial: what setup declares after a server call is not known offline. */
const offlineClient = new Proxy({} as Client, {
  get(_target, property) {
    throw new OfflineCall(String(property));
  },
});

/** How an offline setup ended. */
export type OfflineSetup =
  /** It finished: `handle` holds what it declared. */
  | { handle: BotHandle<unknown>; calledServer?: undefined; problem?: undefined }
  /** It used `bot.api.<calledServer>`: what it declares after that is not known offline. */
  | { calledServer: string; handle?: undefined; problem?: undefined }
  /** It threw. */
  | { problem: SetupProblem; error: unknown; handle?: undefined; calledServer?: undefined };

/**
 * Run `bot`'s setup offline (what `check`, a reload, `commands` and `schedule preview` read). A
 * declaration refused and not caught by the setup is run again, going on past each refusal: the
 * problem then names every declaration refused, not only the first.
 */
export async function runSetupOffline(bot: TrialBot): Promise<OfflineSetup> {
  const refusals: Refusals = { list: [], goOn: false };
  const ran = await setupOnce(bot, refusals);
  if (!("error" in ran)) return ran;
  const error = await everyRefusal(bot, ran.error, refusals).catch((err: unknown) => err);
  return { problem: setupProblem(bot, error), error };
}

/**
 * Every declaration of `bot`'s setup refused, `first` (the one its run stopped at) first: the setup
 * run once more offline, each refused call going on. What that run does past the refusals (its
 * own errors, a server call, its time limit, by default 10 s) only ends the search. `seen`: the
 * refusals of the run that stopped, those before `first` caught by the setup itself (not said).
 */
export async function allRefusals(
  bot: Omit<TrialBot, "module">,
  first: BothostError,
  seen: readonly BothostError[] = [first],
): Promise<BothostError[]> {
  const refusals: Refusals = { list: [], goOn: true };
  await setupOnce({ ...bot, timeoutMs: bot.timeoutMs ?? 10_000 }, refusals);
  const known = new Set(seen.map((err) => err.message));
  return [first, ...refusals.list.filter((err) => !known.has(err.message))];
}

type SetupRun = { handle: BotHandle<unknown> } | { calledServer: string } | { error: unknown };

async function setupOnce(bot: Omit<TrialBot, "module">, refusals: Refusals): Promise<SetupRun> {
  const handle = createBotHandle<unknown>({
    name: bot.name,
    log: pino({ level: "silent" }),
    client: offlineClient,
    state: new KV(new MemoryStore()),
    commandPrefix: bot.commandPrefix,
    refusals,
  });
  try {
    await setupWithin(bot, handle.api);
    return { handle };
  } catch (err) {
    if (err instanceof OfflineCall) return { calledServer: err.property };
    return { error: err };
  }
}

/** `bot`'s setup run with `api` as its bot object, bounded by `bot.timeoutMs` when given. */
async function setupWithin(bot: Omit<TrialBot, "module">, api: unknown): Promise<void> {
  const setup = (bot.definition.setup as (b: unknown, s: unknown) => unknown)(api, bot.settings);
  const { timeoutMs, clock, signal } = bot;
  await (timeoutMs === undefined
    ? setup
    : withinSetupTime(Promise.resolve(setup), { timeoutMs, clock, signal }));
}

/**
 * `bot`'s setup run with `api` (a bot object noting `refusals`) as the daemon runs it: a refused
 * declaration it does not catch is thrown as every declaration it makes refused ({@link everyRefusal}).
 */
export async function runSetup(
  bot: Omit<TrialBot, "module">,
  api: unknown,
  refusals: Refusals,
): Promise<void> {
  try {
    await setupWithin(bot, api);
  } catch (err) {
    await everyRefusal(bot, err, refusals);
  }
}

/**
 * `err`, thrown by a setup whose bot object noted `refusals`, thrown again: as every declaration
 * refused ({@link DeclarationsRefused}) when it was a refused declaration and others are, else as is.
 */
export async function everyRefusal(
  bot: Omit<TrialBot, "module">,
  err: unknown,
  refusals: Refusals,
): Promise<never> {
  if (!refusals.list.includes(err as BothostError)) throw err;
  const all = await allRefusals(bot, err as BothostError, refusals.list);
  const thrown = all.length === 1 ? (err as BothostError) : new DeclarationsRefused(all);
  refused.add(thrown);
  throw thrown;
}

const refused = new WeakSet<Error>();

/** True for what a setup threw at a declaration bothost refused ({@link everyRefusal}): the bot's code to fix. */
export function isRefusedDeclaration(err: unknown): boolean {
  return err instanceof Error && refused.has(err);
}

/**
 * A `webhooks.<name>` of the bot's config that its setup declared no webhook by, as the refused
 * declaration it is (`BOT_SETUP_INVALID`): `check`, the bot's start and a reload say it alike, at
 * its place in the config (`configured`: the names, with each one's `bothost.yaml:14:7`) with the
 * declared name it is closest to.
 */
export function undeclaredWebhook(
  bot: string,
  configured: ReadonlyMap<string, string | undefined> | undefined,
  declared: ReadonlyMap<string, unknown>,
): BotSetupError | undefined {
  const undeclared = [...(configured?.keys() ?? [])].find((name) => !declared.has(name));
  if (undeclared === undefined) return undefined;
  const names = [...declared.keys()];
  const hint = suggest(undeclared, names);
  const err = new BotSetupError(
    `bots.${bot}.webhooks.${undeclared} in the config names no webhook of the bot's module (it declares ${names.join(", ") || "none"}).${hint ? ` Did you mean "${hint}"?` : ""} Use the name given to bot.webhook().`,
  );
  notePlace(err, configured?.get(undeclared));
  refused.add(err);
  return err;
}

/** ` at bots/greeter.ts:12:7` when `err` was thrown in the user's code, else "". */
function thrownAt(err: Error): string {
  const at = whereThrown(err);
  return at ? ` at ${at}` : "";
}

/** `err`, thrown by `bot`'s setup, as a {@link SetupProblem}. */
export function setupProblem(bot: Pick<TrialBot, "name" | "module">, err: unknown): SetupProblem {
  const declaration = isBothostError(err);
  const line = (what: string) => `bots.${bot.name} (${bot.module}): ${what}`;
  if (err instanceof DeclarationsRefused) {
    const lines = err.refusals.map((refused) => line(refusalWords(refused)));
    return { bot: bot.name, module: bot.module, line: lines.join("\n"), declaration };
  }
  const what = declaration
    ? refusalWords(err)
    : `setup threw ${err instanceof Error ? `${err.name}${thrownAt(err)}: ${err.message}` : String(err)}`;
  return {
    bot: bot.name,
    module: bot.module,
    line: line(what),
    declaration,
  };
}
