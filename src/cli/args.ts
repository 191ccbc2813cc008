/**
 * What every command shares: strict argument parsing (node:util's parseArgs, with `-h, --help`
 * added), one-line usage errors (exit 2), and how an error that stops a command is reported.
 */
import { type ParseArgsConfig, parseArgs } from "node:util";
import type { Logger } from "pino";
import { isConfigError } from "../config/config-error.ts";
import { ExitCode, exitCodeFor } from "../config/exit-codes.ts";
import { logRefusedReload } from "../daemon/reload-refused.ts";
import { isBothostError } from "../errors/bothost-error.ts";
import { suggest } from "../errors/did-you-mean.ts";

/** `-c, --config FILE`: every command that reads the config takes it. */
export const configOption = { config: { type: "string", short: "c" } } as const;

type Options = NonNullable<ParseArgsConfig["options"]>;
type Parsed<O extends Options> = ReturnType<
  typeof parseArgs<{
    options: O & { help: { type: "boolean"; short: "h" } };
    allowPositionals: boolean;
    strict: true;
  }>
>;

interface Io {
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
}

/** `bothost <command>: <message>. Run "bothost <command> --help" for the options.`; returns exit code 2. */
export function usageError(
  command: string,
  message: string,
  stderr: NodeJS.WritableStream = process.stderr,
): number {
  stderr.write(`bothost ${command}: ${message}. Run "bothost ${command} --help" for the options.\n`);
  return ExitCode.ConfigInvalid;
}

/**
 * A number option's value written as plain decimal digits (`42`, and `2.5` when `fraction`), or
 * undefined: `1e3`, `0x10`, spaces, signs and an empty value are refused, which Number() would take.
 */
export function decimalValue(text: string, fraction = false): number | undefined {
  return (fraction ? /^(\d+(\.\d+)?|\.\d+)$/ : /^\d+$/).test(text) ? Number(text) : undefined;
}

/**
 * The parsed arguments, or the exit code when the command has nothing more to do: 0 once `--help`
 * printed the help, 2 once an unknown option, a missing value or a stray argument was reported.
 */
export function commandArgs<const O extends Options>(
  command: string,
  argv: string[],
  help: string,
  options: O,
  allowPositionals = false,
  io: Io = {},
): Parsed<O> | number {
  let parsed: Parsed<O>;
  try {
    parsed = parseArgs({
      args: negativeValuesJoined(argv, options),
      options: { ...options, help: { type: "boolean", short: "h" } },
      allowPositionals,
      strict: true,
    }) as Parsed<O>;
  } catch (err) {
    // One line, its own final period dropped: usageError adds ". Run …".
    const message = (err as Error).message;
    // "--limit --json": the value parseArgs will not take is another option (or a lone dash).
    const given = /^Option '(-[^' ]+)' argument is ambiguous/.exec(message)?.[1];
    if (given !== undefined) {
      const long = given.startsWith("--")
        ? given.slice(2)
        : Object.keys(options).find((k) => options[k]!.short === given[1]);
      const ambiguous = `--${long ?? given.replace(/^-+/, "")}`;
      return usageError(
        command,
        `${ambiguous} needs a value; a value beginning with "-" is given as ${ambiguous}=VALUE`,
        io.stderr,
      );
    }
    const reason = message
      .replace(/\. To specify a positional argument[\s\S]*$/, "")
      .replace(/\s*\n\s*/g, " ")
      .replace(/\.+$/, "");
    // "Unknown option '--confg'": the option meant, when one is a likely typo of it.
    const unknown = /^Unknown option '--([^']+)'$/.exec(reason)?.[1];
    const meant = unknown === undefined ? undefined : suggest(unknown, Object.keys(options));
    return usageError(command, meant ? `${reason} (did you mean "--${meant}"?)` : reason, io.stderr);
  }
  if (!(parsed.values as { help?: boolean }).help) return parsed;
  (io.stdout ?? process.stdout).write(help);
  return ExitCode.Ok;
}

/**
 * `--limit -3` as `--limit=-3`: parseArgs refuses a value beginning with a dash as ambiguous, so a
 * negative number given to an option that takes a value reaches the command's own check, which
 * names the option and what it allows.
 */
function negativeValuesJoined(argv: string[], options: Options): string[] {
  const takesValue = (arg: string): string | undefined => {
    const long = /^--([^=]+)$/.exec(arg)?.[1];
    const name =
      long ??
      (/^-[^-]$/.test(arg) ? Object.keys(options).find((k) => options[k]!.short === arg[1]) : undefined);
    return name !== undefined && options[name]?.type === "string" ? name : undefined;
  };
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      out.push(...argv.slice(i));
      break;
    }
    const name = takesValue(arg);
    const next = argv[i + 1];
    if (name !== undefined && next !== undefined && /^-(\d|\.\d)/.test(next)) {
      out.push(`--${name}=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

/**
 * Reports an error that stops a command: a config or module problem as its located message (no
 * stack trace: it is the user's to fix), anything else with its message; returns the exit code.
 * `command` names the command in the prefix (`bothost check: …`) for one whose other lines do.
 */
export function reportStartupError(err: unknown, command?: string): number {
  const prefix = command === undefined ? "bothost" : `bothost ${command}`;
  if (isConfigError(err)) {
    process.stderr.write(`${err.format()}\n`);
  } else if (isBothostError(err)) {
    process.stderr.write(`${prefix}: ${err.message} [${err.code}]\n`);
  } else {
    process.stderr.write(
      `${prefix}: unexpected failure: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
  }
  return exitCodeFor(err);
}

/** Rows (the header first) as lines of aligned columns, two spaces apart, the last column unpadded. */
export function table(rows: readonly string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd(),
  );
}

/** Resolves at the first SIGINT or SIGTERM, or when `signal` aborts, and removes its listeners. */
export function untilStopped(signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      signal?.removeEventListener("abort", stop);
      resolve();
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    if (signal?.aborted) stop();
    signal?.addEventListener("abort", stop, { once: true });
  });
}

/** `daemon.reload()` in the background: a refused config is logged with its located errors, the old one runs on. */
export function reloadInBackground(daemon: { reload(): Promise<unknown> }, log: Logger): void {
  daemon.reload().catch((err: unknown) => logRefusedReload(log, err));
}

export { reloadProblems } from "../daemon/reload-refused.ts";

/** `unknown <what> "word"`, naming the word meant when it is a likely typo of one, else the words. */
export function unknownWord(what: string, word: string, words: readonly string[]): string {
  const meant = suggest(word, words);
  return `unknown ${what} "${word}" (${meant ? `did you mean "${meant}"?` : `known: ${words.join(", ")}`})`;
}
