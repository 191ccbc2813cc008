/**
 * A command line's words bound to the command's declared arguments and options, then validated by
 * their zod schemas. Words are split at spaces; "double" or 'single' quotes keep spaces in one
 * word. The last argument of a `rest: true` command takes the rest of the line as typed.
 */

import type { z } from "zod";
import { suggest } from "../../errors/did-you-mean.ts";
import { issueInWords, type SchemaIssue } from "../../errors/issue-words.ts";
import { choicesOf, inputFor, isFlag, isOptional, isOtherNumberNotation, typeOf } from "./arg-schema.ts";
import { type Command, fullName } from "./command-spec.ts";

export type Parsed =
  | { ok: true; args: Record<string, unknown>; options: Record<string, unknown> }
  /** What was wrong, one line per problem, naming the argument or option. */
  | { ok: false; problems: string[] };

interface Word {
  value: string;
  start: number;
  quoted: boolean;
}

const QUOTES: Record<string, string> = { '"': '"', "'": "'", "“": "”", "‘": "’" };

function words(line: string): Word[] {
  const out: Word[] = [];
  let i = 0;
  while (i < line.length) {
    while (i < line.length && /\s/.test(line[i]!)) i++;
    if (i >= line.length) break;
    const start = i;
    const close = QUOTES[line[i]!];
    if (close !== undefined) {
      const end = line.indexOf(close, i + 1);
      if (end > i) {
        out.push({ value: line.slice(i + 1, end), start, quoted: true });
        i = end + 1;
        continue;
      }
    }
    while (i < line.length && !/\s/.test(line[i]!)) i++;
    out.push({ value: line.slice(start, i), start, quoted: false });
  }
  return out;
}

/** Bind and validate `line` (what follows the command's name) for `command`. */
export function parseArguments(command: Command, line: string): Parsed {
  const problems: string[] = [];
  const raw: string[] = [];
  const given = new Map<string, unknown>();
  const list = words(line);
  const optionNamed = (name: string) => command.options.find(([n]) => n.toLowerCase() === name.toLowerCase());
  for (let i = 0; i < list.length; i++) {
    const word = list[i]!;
    const long = word.quoted ? undefined : /^--([^=\s]+)(?:=(.*))?$/s.exec(word.value);
    const pair = word.quoted || long ? undefined : /^([a-z][\w-]*)=(.*)$/is.exec(word.value);
    const option = long ? optionNamed(long[1]!) : pair ? optionNamed(pair[1]!) : undefined;
    if (long && !option) {
      const hint = suggest(
        long[1]!,
        command.options.map(([n]) => n),
      );
      problems.push(
        `unknown option "--${long[1]}"${hint ? ` (did you mean "--${hint}"?)` : command.options.length === 0 ? "; this command takes no options" : ""}`,
      );
      continue;
    }
    if (option) {
      const [name, schema] = option;
      let value = long ? long[2] : pair![2];
      if (value === undefined && !isFlag(schema)) {
        value = list[i + 1]?.value;
        if (value === undefined) {
          problems.push(`option "--${name}" needs a value`);
          continue;
        }
        i++;
      }
      given.set(name, value === undefined ? true : inputFor(schema, value));
      continue;
    }
    if (command.rest && raw.length === command.args.length - 1) {
      const rest = line.slice(word.start).trim();
      raw.push(list.length === i + 1 && word.quoted ? word.value : rest);
      break;
    }
    if (raw.length >= command.args.length) {
      problems.push(
        command.subcommands.length > 0 && raw.length === 0
          ? unknownSubcommand(command, word.value)
          : command.args.length === 0
            ? `"${fullName(command)}" takes no arguments; got "${word.value}"`
            : `unexpected "${word.value}" after the last argument`,
      );
      break;
    }
    raw.push(word.value);
  }
  const args: Record<string, unknown> = {};
  command.args.forEach(([name, schema], i) => {
    const word = raw[i];
    if (word === undefined && !isOptional(schema)) {
      problems.push(`<${name}> is missing`);
      return;
    }
    const result = schema.safeParse(word === undefined ? undefined : inputFor(schema, word));
    if (result.success) args[name] = result.data;
    else problems.push(`<${name}>: ${explain(schema, result.error, word)}`);
  });
  const options: Record<string, unknown> = {};
  for (const [name, schema] of command.options) {
    const result = schema.safeParse(given.get(name));
    if (result.success) options[name] = result.data;
    else
      problems.push(
        `--${name}: ${explain(schema, result.error, given.has(name) ? String(given.get(name)) : undefined)}`,
      );
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, args, options };
}

/** A schema's complaint in words for the person who typed the value. */
function explain(schema: z.ZodType, error: z.ZodError, typed: string | undefined): string {
  // Past the safe-integer range, `.int()` complains first; the schema's own bound says more.
  const issue = error.issues.find((i) => (i as { origin?: string }).origin !== "int") ?? error.issues[0];
  if (typed === undefined) return "is required";
  const shown = JSON.stringify(typed);
  if (issue?.code === "invalid_type") {
    const type = typeOf(schema);
    const article = /^[aeiou]/.test(type) ? "an" : "a";
    const whole = type === "bigint" || (issue as { expected?: string }).expected === "int";
    const wanted = type === "boolean" ? "yes or no" : whole ? "a whole number" : `${article} ${type}`;
    const notation =
      (type === "number" || type === "bigint") && isOtherNumberNotation(typed)
        ? ` (write it in plain decimal digits${type === "number" ? ", e.g. 16 or 1.5" : ", e.g. 16"})`
        : "";
    return `expected ${wanted}, got ${shown}${notation}`;
  }
  if (issue?.code === "invalid_value") {
    const choices = choicesOf(schema);
    if (choices) return `expected one of ${choices.join(", ")}, got ${shown}`;
  }
  const words = issueInWords(issue as SchemaIssue | undefined);
  return words ? `${words}, got ${shown}` : `${issue?.message ?? "invalid"} (got ${shown})`;
}

/** What to say of a word where a subcommand was expected. */
function unknownSubcommand(command: Command, word: string): string {
  const names = command.subcommands.map((s) => s.name);
  const hint = suggest(word, names);
  return `"${command.name}" has no subcommand "${word}"${hint ? ` (did you mean "${command.name} ${hint}"?)` : `; its subcommands: ${names.join(", ")}`}`;
}
