/**
 * Commands as words and as data: the usage line, the generated `help` and `help <command>`, how a
 * refusal names who may run a command, and the JSON `bothost commands --json` prints (name,
 * description, arguments, subcommands: the shape of the proposed server-side bot-command registry).
 */
import type { z } from "zod";
import { ROLE_NAMES, Role, type RoleName } from "../../effects/users/roles.ts";
import { choicesOf, descriptionOf, isFlag, isOptional, typeOf } from "./arg-schema.ts";
import { type Command, fullName } from "./command-spec.ts";

/** One argument or option of {@link CommandDescription}. */
export interface ArgumentDescription {
  name: string;
  type: string;
  required: boolean;
  description?: string;
  choices?: string[];
  /** The argument takes the rest of the line. */
  rest?: boolean;
}

/** A command as data (`bothost commands --json`). */
export interface CommandDescription {
  name: string;
  description: string;
  aliases: string[];
  usage: string;
  arguments: ArgumentDescription[];
  options: ArgumentDescription[];
  examples: string[];
  /** Who may run it; `null`: everyone. */
  permission: { roles?: RoleName[]; groups?: (string | number)[]; custom?: string } | null;
  subcommands: CommandDescription[];
}

const ROLE_WORDS: Record<RoleName, string> = {
  owner: "organization owners",
  admin: "administrators and owners",
  moderator: "moderators, administrators and owners",
  member: "members, moderators, administrators and owners (not guests)",
  guest: "everyone",
};

/** `remind <minutes> <text...> [--loud]` */
export function usageOf(c: Command, prefix = ""): string {
  const args = c.args.map(([name, schema], i) => {
    const shown = `${name}${c.rest && i === c.args.length - 1 ? "..." : ""}`;
    return isOptional(schema) ? `[${shown}]` : `<${shown}>`;
  });
  const options = c.options.map(([name, schema]) =>
    isFlag(schema) ? `[--${name}]` : `[--${name} <${typeOf(schema)}>]`,
  );
  return [`${prefix}${fullName(c)}`, ...args, ...options].join(" ");
}

/** Who may run `c`, in words: "moderators, administrators and owners or members of support". */
export function whoMay(c: Command): string | undefined {
  const a = c.allow;
  if (a === undefined) return undefined;
  const parts = [
    ...(a.role ? [ROLE_WORDS[a.role]] : []),
    ...(a.groups && a.groups.length > 0 ? [`members of ${a.groups.map((g) => `"${g}"`).join(" or ")}`] : []),
    ...(a.when ? [a.who ?? "those the bot allows"] : []),
  ];
  return parts.join(" or ");
}

/** One line of a list: `* \`usage\`: description (who may run it)`. */
function listLine(c: Command, prefix: string): string {
  const who = whoMay(c);
  return `* \`${usageOf(c, prefix)}\`${c.description ? `: ${c.description}` : ""}${who ? ` (${who})` : ""}`;
}

/**
 * The generated `help`: one line per command, and one per subcommand after its command; then
 * those of the other bots of the account (each with its own prefix).
 */
export function helpList(
  commands: readonly Command[],
  prefix: string,
  others: readonly { declared: readonly Command[]; prefix: string }[] = [],
): string {
  const lines = [{ declared: commands, prefix }, ...others].flatMap(({ declared, prefix }) =>
    declared.flatMap((c) => [c, ...c.subcommands]).map((c) => listLine(c, prefix)),
  );
  return [`Commands (say \`${prefix}help <command>\` for one in detail):`, ...lines].join("\n");
}

/** The generated `help <command>`. */
export function helpFor(c: Command, prefix: string): string {
  const line = ([name, schema]: [string, z.ZodType], option: boolean) => {
    const choices = choicesOf(schema);
    const type = choices ? choices.join(" | ") : isFlag(schema) && option ? "flag" : typeOf(schema);
    const description = descriptionOf(schema);
    return `* \`${option ? `--${name}` : `<${name}>`}\` (${type}${isOptional(schema) ? ", optional" : ""})${description ? `: ${description}` : ""}`;
  };
  const who = whoMay(c);
  return [
    `**${prefix}${fullName(c)}**${c.description ? `: ${c.description}` : ""}`,
    `Usage: \`${usageOf(c, prefix)}\``,
    ...(c.aliases.length > 0 ? [`Also: ${c.aliases.map((a) => `\`${a}\``).join(", ")}`] : []),
    ...(c.args.length > 0 ? ["Arguments:", ...c.args.map((a) => line(a, false))] : []),
    ...(c.options.length > 0 ? ["Options:", ...c.options.map((o) => line(o, true))] : []),
    ...(c.examples.length > 0 ? [`Examples: ${c.examples.map((e) => `\`${prefix}${e}\``).join(", ")}`] : []),
    ...(who ? [`Who may run it: ${who}.`] : []),
    ...(c.subcommands.length > 0 ? ["Subcommands:", ...c.subcommands.map((s) => listLine(s, prefix))] : []),
  ].join("\n");
}

function describeArg([name, schema]: [string, z.ZodType], rest: boolean): ArgumentDescription {
  const description = descriptionOf(schema);
  const choices = choicesOf(schema);
  return {
    name,
    type: typeOf(schema),
    required: !isOptional(schema),
    ...(description ? { description } : {}),
    ...(choices ? { choices } : {}),
    ...(rest ? { rest: true } : {}),
  };
}

/** A command as data. */
export function describeCommand(c: Command): CommandDescription {
  const a = c.allow;
  return {
    name: c.name,
    description: c.description ?? "",
    aliases: c.aliases,
    usage: usageOf(c),
    arguments: c.args.map((arg, i) => describeArg(arg, c.rest && i === c.args.length - 1)),
    options: c.options.map((o) => describeArg(o, false)),
    examples: c.examples,
    permission: a
      ? {
          ...(a.role ? { roles: ROLE_NAMES.filter((r) => Role[r] <= Role[a.role!]) } : {}),
          ...(a.groups ? { groups: [...a.groups] } : {}),
          ...(a.when ? { custom: a.who ?? "decided by the bot" } : {}),
        }
      : null,
    subcommands: c.subcommands.map(describeCommand),
  };
}
