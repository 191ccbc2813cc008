/**
 * The error a bad config file raises: every problem at once, each with file:line:column and path.
 */
import { BothostError } from "../errors/bothost-error.ts";
import { type ConfigProblem, formatProblems } from "./config-problem.ts";
import type { ConfigSource } from "./config-source.ts";

/** `CONFIG_NOT_FOUND`: the file cannot be read; `CONFIG_INVALID`: it (or a bot's settings) has problems. */
export type ConfigErrorCode = "CONFIG_NOT_FOUND" | "CONFIG_INVALID";

/**
 * What a file with problems still says of its bots: for each bot whose `module` and `settings`
 * have no problem of their own, the module (as written) and the raw settings, so that the
 * settings can be checked by the module's schema in the same report.
 */
export interface BotsDraft {
  readonly source: ConfigSource;
  readonly bots: ReadonlyMap<string, { readonly module: string; readonly settings: unknown }>;
  /** Hides the file's secrets (interpolated values, keys) in a problem's path or message. */
  readonly redact: (text: string) => string;
}

/** A config file that cannot be used, with every problem found. */
export class ConfigError extends BothostError<ConfigErrorCode> {
  readonly problems: readonly ConfigProblem[];
  /** Set when the file parsed but did not validate (see {@link BotsDraft}). */
  readonly draft: BotsDraft | undefined;

  constructor(
    code: ConfigErrorCode,
    problems: readonly ConfigProblem[],
    options?: { cause?: unknown; draft?: BotsDraft },
  ) {
    const sorted = Object.freeze(
      [...problems]
        .sort(compareProblems)
        .map((p) => Object.freeze({ ...p, path: cutLong(p.path), message: cutLong(p.message) })),
    );
    const file = sorted[0]?.file ?? "config";
    const count = sorted.length === 1 ? "1 problem" : `${sorted.length} problems`;
    super(code, `${file} has ${count}:\n${formatProblems(sorted)}`, options);
    this.name = "ConfigError";
    this.problems = sorted;
    this.draft = options?.draft;
  }

  /** The problems, one per line: `bothost.yaml:12:5 bots.moderator.api_key: message`. */
  format(): string {
    return formatProblems(this.problems);
  }
}

/** The longest word (a run without spaces) and the longest text a problem shows of the file. */
const LONGEST_WORD = 120;
const LONGEST_TEXT = 2_000;

/**
 * `text` with every word over {@link LONGEST_WORD} characters cut, and cut itself past
 * {@link LONGEST_TEXT}, each cut naming the length: a megabyte value or name in the file is named,
 * not echoed (once in the path, again in the message).
 */
export function cutLong(text: string): string {
  const words = text.replace(
    new RegExp(`\\S{${LONGEST_WORD + 1},}`, "g"),
    (word) => `${word.slice(0, LONGEST_WORD / 2)}… (${word.length} characters)`,
  );
  return words.length <= LONGEST_TEXT
    ? words
    : `${words.slice(0, LONGEST_TEXT)}… (cut; ${words.length} characters in all)`;
}

export function isConfigError(err: unknown): err is ConfigError {
  return err instanceof ConfigError;
}

function compareProblems(a: ConfigProblem, b: ConfigProblem): number {
  return a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column;
}
