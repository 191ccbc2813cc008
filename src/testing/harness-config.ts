/**
 * The problems of the config a test harness writes, told in the words of what the test gave: a
 * problem in a bot's `config` lines (or in the daemon's, runBot's `daemon`) is located in those
 * lines, never in the temporary file they were written to (which the test never saw, and which is
 * gone by the time it is read).
 */
import type { ConfigError } from "../config/config-error.ts";
import type { ConfigProblem } from "../config/config-problem.ts";
import type { ConfigSource } from "../config/config-source.ts";
import { BOT_KEY_AT_TOP, DAEMON_KEY_IN_BOT } from "../config/zod-problems.ts";
import { BothostError } from "../errors/bothost-error.ts";

/** Where a test's own config lines (runBot's `config` of a bot, or its `daemon`) landed in the written file. */
export interface BotLines {
  /** The bot's name; "" for the daemon's lines. */
  readonly name: string;
  /** The option of runBot the lines were given as. */
  readonly option: "config" | "daemon";
  /** The file's 1-based line of the block's first line. */
  readonly first: number;
  readonly count: number;
  /** How far each line was indented in the file. */
  readonly indent: number;
}

/** The bot's config lines that line `line` of the written file is one of, if any. */
export const blockAt = (blocks: readonly BotLines[], line: number): BotLines | undefined =>
  blocks.find((b) => line >= b.first && line < b.first + b.count);

/** `line`:`column` of the written file in the test's terms, within `block`: `config:2:3`. */
export const blockPlace = (block: BotLines, line: number, column: number): string =>
  `${block.option}:${Math.min(line - block.first + 1, block.count)}:${Math.max(1, column - block.indent)}`;

/** What a test gives instead of the keys the harness writes in each bot's entry. */
const OWN_KEYS: Record<string, string> = {
  module: ": give the bot as runBot's bot option",
  email: ": give it as runBot's email option",
  api_key: ": the kit reads the account's key from the sandbox",
};

/**
 * The daemon's keys the harness writes or decides itself, with what a test gives instead: the
 * daemon's lines (runBot's `daemon`) may set the others.
 */
const KIT_DAEMON_KEYS: Record<string, string> = {
  server: ": the bot runs against the sandbox",
  state: ": the kit keeps the bot's state in a folder of its own",
  bots: ": give the bot as runBot's bot option, more of its entry as config",
  http: ": the kit opens the bot's listener for webhooks and outgoingWebhook",
  log: ": the kit keeps every line, at debug, for logs()",
  leases: ": the kit runs the bot in one daemon, its state on disk",
};

const kitKeyMessage = (key: string) => `is set by runBot itself${KIT_DAEMON_KEYS[key]}`;

/**
 * The keys of the daemon's lines that the harness decides itself, in a config that loaded (one
 * it writes too fails the load, as set twice): each a problem at the key.
 */
export function kitKeysGiven(source: ConfigSource, blocks: readonly BotLines[]): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const key of Object.keys(KIT_DAEMON_KEYS)) {
    const problem = source.problem([key], kitKeyMessage(key), "key");
    if (blockAt(blocks, problem.line)?.option === "daemon") problems.push(problem);
  }
  return problems;
}

/**
 * A problem of the daemon's lines, in the test's terms: any problem of a key of the kit's is that
 * it is the kit's; a bot's key there is given in runBot's `config`.
 */
function daemonProblem(path: string, message: string): [string, string] {
  const key = path.split(".")[0]!;
  if (Object.hasOwn(KIT_DAEMON_KEYS, key)) return [key, kitKeyMessage(key)];
  if (message === BOT_KEY_AT_TOP)
    return [path, "is not a setting of the whole daemon: it is the bot's, given in runBot's config"];
  return [path, message];
}

/**
 * A problem of a bot's config lines, in the test's terms: a key the harness writes itself is
 * runBot's, a daemon's key is given in runBot's `daemon`.
 */
function botLinesMessage(message: string, key: string, twiceOutside: boolean): string {
  if (twiceOutside) return `is set by runBot itself${OWN_KEYS[key] ?? ": leave it out of config"}`;
  if (message === DAEMON_KEY_IN_BOT)
    return "is not a bot's setting: it is set for the whole daemon, given in runBot's daemon";
  return message;
}

/**
 * `err`, thrown by loading the written config, as an error (with `err`'s code) naming each problem in the test's
 * terms: `config:1:12 retries.attempt: …` for a bot's config lines, `daemon:1:19 shutdown_timeout: …`
 * for the daemon's; the field alone for a problem elsewhere (a line the harness wrote).
 */
export function harnessConfigError(err: ConfigError, blocks: readonly BotLines[]): BothostError {
  const inBlock = (line: number) => blockAt(blocks, line);
  // A YAML syntax error may be found past the construct left open: the block before it.
  const before = (line: number) => blocks.filter((b) => b.first <= line).at(-1);
  const byBot = new Map<string, string[]>();
  for (const p of err.problems) {
    // "set twice (also on line 12)": a line of the written file, said as one of the config's;
    // a key the harness wrote itself (module, email, api_key) is said to be runBot's.
    const twice = /^is set twice \(also on line (\d+)\)/.exec(p.message);
    const firstSet = twice ? inBlock(Number(twice[1])) : undefined;
    // A key of the daemon's lines that the harness writes after them (bots) is said where the test wrote it.
    const moved = firstSet?.option === "daemon" && inBlock(p.line) === undefined;
    const line = moved ? Number(twice![1]) : p.line;
    const column = moved ? 1 : p.column;
    const block = inBlock(line) ?? (p.path === "" && line > 0 ? before(line) : undefined);
    const name =
      block?.option === "daemon"
        ? ""
        : (block?.name ?? /^bots\.([a-z0-9_-]+)/.exec(p.path)?.[1] ?? "the bot");
    const prefix = `bots.${name}.`;
    const inBot = block && p.path.startsWith(prefix) ? p.path.slice(prefix.length) : p.path;
    const key = inBot.split(".").at(-1) ?? "";
    const twiceOutside = block !== undefined && twice !== null && (moved || firstSet === undefined);
    // A line of the test's own lines said as one of them ("also on line 1 of its config").
    const relined = p.message.replace(/\bline (\d+)\b/g, (all, n: string) => {
      const other = inBlock(Number(n));
      return other === block && block ? `line ${Number(n) - block.first + 1} of its ${block.option}` : all;
    });
    const [path, message] =
      block?.option === "daemon"
        ? daemonProblem(inBot, relined)
        : [inBot, block ? botLinesMessage(relined, key, twiceOutside) : relined];
    const where = block ? `${blockPlace(block, line, column)} ` : "";
    const lines = byBot.get(name) ?? [];
    const said = `  ${where}${path === "" ? "" : `${path}: `}${message}`;
    if (!lines.includes(said)) lines.push(said);
    byBot.set(name, lines);
  }
  const parts = [...byBot].map(
    ([name, lines]) =>
      `${name === "" ? "the daemon's" : `${name}'s`} config would be refused by bothost run:\n${lines.join("\n")}`,
  );
  // The loader's code kept (CONFIG_INVALID, …), so that a test can tell a refused config apart.
  return new BothostError(err.code, parts.join("\n"));
}
