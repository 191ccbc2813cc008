/**
 * The problems of the config a test harness writes, told in the words of what the test gave: a
 * problem in a bot's `config` lines is located in those lines, never in the temporary file they
 * were written to (which the test never saw, and which is gone by the time it is read).
 */
import type { ConfigError } from "../config/config-error.ts";
import { BothostError } from "../errors/bothost-error.ts";

/** Where a bot's own config lines (runBot's `config`) landed in the written file. */
export interface BotLines {
  readonly name: string;
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
  `config:${Math.min(line - block.first + 1, block.count)}:${Math.max(1, column - block.indent)}`;

/** What a test gives instead of the keys the harness writes in each bot's entry. */
const OWN_KEYS: Record<string, string> = {
  module: ": give the bot as runBot's bot option",
  email: ": give it as runBot's email option",
  api_key: ": the kit reads the account's key from the sandbox",
};

/**
 * `err`, thrown by loading the written config, as an error (with `err`'s code) naming each problem in the test's
 * terms: `config:1:12 retries.attempt: …` for a bot's config lines; the field alone for a
 * problem elsewhere (a line the harness wrote).
 */
export function harnessConfigError(err: ConfigError, blocks: readonly BotLines[]): BothostError {
  const inBlock = (line: number) => blockAt(blocks, line);
  // A YAML syntax error may be found past the construct left open: the block before it.
  const before = (line: number) => blocks.filter((b) => b.first <= line).at(-1);
  const byBot = new Map<string, string[]>();
  for (const p of err.problems) {
    const block = inBlock(p.line) ?? (p.path === "" && p.line > 0 ? before(p.line) : undefined);
    const name = block?.name ?? /^bots\.([a-z0-9_-]+)/.exec(p.path)?.[1] ?? "the bot";
    const prefix = `bots.${name}.`;
    const path = block && p.path.startsWith(prefix) ? p.path.slice(prefix.length) : p.path;
    // "set twice (also on line 12)": a line of the written file, said as one of the config's;
    // a key the harness wrote itself (module, email, api_key) is said to be runBot's.
    const twice = /^is set twice \(also on line (\d+)\)/.exec(p.message);
    const key = path.split(".").at(-1) ?? "";
    const message =
      block && twice && inBlock(Number(twice[1])) === undefined
        ? `is set by runBot itself${OWN_KEYS[key] ?? ": leave it out of config"}`
        : p.message.replace(/\bline (\d+)\b/g, (all, n: string) => {
            const other = inBlock(Number(n));
            return other === block && block ? `line ${Number(n) - block.first + 1} of its config` : all;
          });
    const where = block ? `${blockPlace(block, p.line, p.column)} ` : "";
    const lines = byBot.get(name) ?? [];
    lines.push(`  ${where}${path === "" ? "" : `${path}: `}${message}`);
    byBot.set(name, lines);
  }
  const parts = [...byBot].map(
    ([name, lines]) => `${name}'s config would be refused by bothost run:\n${lines.join("\n")}`,
  );
  // The loader's code kept (CONFIG_INVALID, …), so that a test can tell a refused config apart.
  return new BothostError(err.code, parts.join("\n"));
}
