/**
 * What `bot.command(name, options, handler)` declares, and the checks made when it is called: a
 * mistake in a command's declaration fails the bot's setup with a message naming it.
 */
import type { z } from "zod";
import { ROLE_NAMES, type RoleName } from "../../effects/users/roles.ts";
import { suggest } from "../../errors/did-you-mean.ts";
import type { Sender, Where } from "../../pipeline/addressed.ts";
import type { ContextFor } from "../../pipeline/composer.ts";
import type { BotContext } from "../../pipeline/context.ts";
import { Registration } from "../../pipeline/handler-names.ts";
import { BotSetupError } from "../setup-error.ts";

/** A command's arguments or options: a zod schema per name. */
export type ArgShape = Record<string, z.ZodType>;
/** The values a handler receives for an {@link ArgShape}. */
export type ParsedArgs<A extends ArgShape> = { [K in keyof A]: z.output<A[K]> };

/** The context of a command's handler: a message context with the parsed arguments. */
export type CommandContext<
  S = unknown,
  A = Record<string, unknown>,
  O = Record<string, unknown>,
> = ContextFor<BotContext<S>, "message"> & {
  /** The positional arguments, validated by their schemas. */
  args: A;
  /** The `--flag` / `key=value` options, validated by their schemas. */
  options: O;
  /** The command's name, and the word the sender used (an alias, in any case). */
  command: { name: string; invokedAs: string };
  where: Where;
  sender: Sender;
};

/**
 * Who may run a command: a role name (that role or a more privileged one), or any of a role,
 * user groups (by name or id) and a predicate; `who` words the predicate in a refusal.
 */
export type Permission<C = CommandContext> =
  | RoleName
  | {
      role?: RoleName;
      groups?: readonly (string | number)[];
      when?: (ctx: C) => boolean | Promise<boolean>;
      /** How a refusal names who may run it when `when` decides, e.g. "the on-call person". */
      who?: string;
    };

/** A command's declaration. */
export interface CommandOptions<
  C = CommandContext,
  A extends ArgShape = ArgShape,
  O extends ArgShape = ArgShape,
> {
  /** One line for the help. */
  description?: string;
  /** Positional arguments, in order (`.describe()` adds a description; optional ones go last). */
  args?: A;
  /** The last argument takes the rest of the line (spaces and all). */
  rest?: boolean;
  /** Options: `--name value`, `--name=value` or `name=value`; a boolean one is a flag (`--name`). */
  options?: O;
  /** Other names (case-insensitive, like the name). */
  aliases?: readonly string[];
  /** Lines shown by `help <command>`, e.g. `"remind 10 stretch your legs"`. */
  examples?: readonly string[];
  /** Who may run it; default everyone. */
  allow?: Permission<C>;
}

/** A declared command, checked. */
export interface Command {
  name: string;
  aliases: string[];
  description: string | undefined;
  args: [string, z.ZodType][];
  rest: boolean;
  options: [string, z.ZodType][];
  examples: string[];
  allow: Exclude<Permission<never>, RoleName> | undefined;
  handler: (ctx: never) => unknown;
  /** The parent's name, for a subcommand (`standup` for `standup skip`). */
  parent: string | undefined;
  /** A command's subcommands, in declaration order; a subcommand has none. */
  subcommands: Command[];
  /** Its registration, named on the line of a run that times out in its handler. */
  made: Registration;
}

/** A command's full name: `standup skip` for a subcommand. */
export const fullName = (c: Command): string => (c.parent ? `${c.parent} ${c.name}` : c.name);

const NAME = /^[a-z][a-z0-9_-]{0,31}$/;

/** What a command's name (or a subcommand's, an alias) must be. */
export const NAME_RULE = '1-32 letters, digits, "_" or "-", starting with a letter';

/** Whether `word` is a command's name as {@link NAME_RULE} says (without case). */
export const isCommandName = (word: string): boolean => NAME.test(word.toLowerCase());
const KEYS = ["description", "args", "rest", "options", "aliases", "examples", "allow"];
const ALLOW_KEYS = ["role", "groups", "when", "who"];

/**
 * Check a `bot.command()` call and make its {@link Command}; `taken` are the names in use (among
 * the commands, or among the parent's subcommands for a subcommand of `parent`).
 */
export function checkCommand(
  name: unknown,
  options: CommandOptions<never, ArgShape, ArgShape>,
  handler: unknown,
  taken: ReadonlySet<string>,
  parent?: Command,
): Command {
  const where = `bot.command(${JSON.stringify(parent ? `${parent.name} ${String(name)}` : name)})`;
  const fail = (message: string) => new BotSetupError(`${where}: ${message}`);
  const checkName = (n: unknown, what: string): string => {
    if (typeof n !== "string" || !isCommandName(n))
      throw fail(`${what} must be ${NAME_RULE}; got ${JSON.stringify(n)}.`);
    const lower = n.toLowerCase();
    if (taken.has(lower)) throw fail(`${what} "${lower}" is already a command or an alias.`);
    return lower;
  };
  const command = checkName(name, "the name");
  if (typeof handler !== "function") throw fail("the handler must be a function (ctx) => ….");
  if (typeof options !== "object" || options === null) throw fail("the options must be an object.");
  for (const key of Object.keys(options)) {
    if (!KEYS.includes(key)) {
      const hint = suggest(key, KEYS);
      throw fail(
        `unknown option "${key}".${hint ? ` Did you mean "${hint}"?` : ""} Valid: ${KEYS.join(", ")}.`,
      );
    }
  }
  const seen = new Set([...taken, command]);
  const aliases = (options.aliases ?? []).map((a) => {
    const alias = checkName(a, "an alias");
    if (seen.has(alias)) throw fail(`the alias "${alias}" is given twice.`);
    seen.add(alias);
    return alias;
  });
  const args = schemas(options.args, "args", fail);
  const opts = schemas(options.options, "options", fail);
  const firstOptional = args.findIndex(([, s]) => s.safeParse(undefined).success);
  if (firstOptional >= 0 && args.slice(firstOptional).some(([, s]) => !s.safeParse(undefined).success))
    throw fail(
      `the required argument "${args.find(([, s], i) => i > firstOptional && !s.safeParse(undefined).success)![0]}" follows an optional one; put optional arguments last.`,
    );
  if (options.rest && args.length === 0)
    throw fail(`"rest: true" needs at least one argument to take the rest of the line.`);
  for (const [n] of opts)
    if (args.some(([a]) => a === n)) throw fail(`"${n}" is both an argument and an option.`);
  return {
    name: command,
    aliases,
    description: options.description,
    args,
    rest: options.rest === true,
    options: opts,
    examples: [...(options.examples ?? [])],
    // A subcommand without its own `allow` is the parent's to run.
    allow: options.allow === undefined && parent ? parent.allow : checkAllow(options.allow, fail),
    handler: handler as Command["handler"],
    parent: parent?.name,
    subcommands: [],
    made: new Registration(`command "${parent ? `${parent.name} ` : ""}${command}"`),
  };
}

function schemas(shape: unknown, key: string, fail: (m: string) => Error): [string, z.ZodType][] {
  if (shape === undefined) return [];
  if (typeof shape !== "object" || shape === null) throw fail(`"${key}" must be an object of zod schemas.`);
  return Object.entries(shape).map(([n, s]) => {
    if (!/^[a-z][a-z0-9_-]*$/i.test(n)) throw fail(`${key} "${n}": names are letters, digits, "_" and "-".`);
    if (typeof (s as { safeParse?: unknown })?.safeParse !== "function")
      throw fail(`${key} "${n}" must be a zod schema such as z.string() or z.number().int().`);
    return [n, s as z.ZodType];
  });
}

function checkAllow(allow: unknown, fail: (m: string) => Error): Command["allow"] {
  if (allow === undefined) return undefined;
  const role = (r: unknown): RoleName => {
    if (ROLE_NAMES.includes(r as RoleName)) return r as RoleName;
    const hint = typeof r === "string" ? suggest(r, ROLE_NAMES) : undefined;
    throw fail(
      `unknown role ${JSON.stringify(r)}.${hint ? ` Did you mean "${hint}"?` : ""} Roles: ${ROLE_NAMES.join(", ")}.`,
    );
  };
  if (typeof allow === "string") return { role: role(allow) };
  if (typeof allow !== "object" || allow === null)
    throw fail(`"allow" must be a role name or { role, groups, when }.`);
  const a = allow as Record<string, unknown>;
  for (const key of Object.keys(a)) {
    if (!ALLOW_KEYS.includes(key)) {
      const hint = suggest(key, ALLOW_KEYS);
      throw fail(
        `unknown "allow" key "${key}".${hint ? ` Did you mean "${hint}"?` : ""} Valid: ${ALLOW_KEYS.join(", ")}.`,
      );
    }
  }
  const groups = a.groups;
  if (
    groups !== undefined &&
    (!Array.isArray(groups) || groups.some((g) => typeof g !== "string" && typeof g !== "number"))
  )
    throw fail(`"allow.groups" must be a list of group names or ids.`);
  if (a.when !== undefined && typeof a.when !== "function")
    throw fail(`"allow.when" must be a function (ctx) => boolean.`);
  if (a.role === undefined && groups === undefined && a.when === undefined)
    throw fail(`"allow" names nobody; give a role, groups or when.`);
  return {
    ...(a.role !== undefined ? { role: role(a.role) } : {}),
    ...(groups !== undefined ? { groups: groups as (string | number)[] } : {}),
    ...(a.when !== undefined ? { when: a.when as never } : {}),
    ...(typeof a.who === "string" ? { who: a.who } : {}),
  };
}
