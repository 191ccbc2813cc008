/**
 * The commands of one bot and the middleware that routes messages to them. A message is a
 * command when it is addressed to the bot (a one-to-one direct message, or a mention of the bot
 * anywhere in it) or starts with the bot's `command_prefix`; its first word names the command
 * (case-insensitive, or an alias), the rest is parsed into the command's arguments.
 *
 * An addressed message whose first word is no command passes on to the handlers declared after
 * the commands; if none of them takes it, the bot answers with the closest command names. A
 * prefixed word that resembles no command (`!!!`) is left alone.
 *
 * A message from a bot (one of the server's system bots, or a user the users cache knows as a
 * bot) is no command: it passes on to the handlers declared after the commands, and the router
 * never answers it (no usage, refusal or "unknown command" reply that another bot could answer).
 *
 * Bots of one daemon on one account answer as one (see shared-account.ts).
 */
import { z } from "zod";
import { isAtLeast, roleName } from "../../effects/users/roles.ts";
import { unknownGroupCheck } from "../../effects/users/user-groups.ts";
import { suggest } from "../../errors/did-you-mean.ts";
import { addressOf, type SelfRef, textOf } from "../../pipeline/addressed.ts";
import {
  type Composer,
  finishedSynchronously,
  type Middleware,
  type NextFunction,
} from "../../pipeline/composer.ts";
import type { BotContext } from "../../pipeline/context.ts";
import { IN_HANDLER, type InHandler, Registration } from "../../pipeline/handler-names.ts";
import type { AnyEvent } from "../../wire/events.ts";
import { BotSetupError } from "../setup-error.ts";
import {
  type ArgShape,
  type Command,
  type CommandOptions,
  checkCommand,
  fullName,
  isCommandName,
  NAME_RULE,
} from "./command-spec.ts";
import {
  type CommandDescription,
  describeCommand,
  helpFor,
  helpList,
  usageOf,
  whoMay,
} from "./describe-commands.ts";
import { parseArguments } from "./parse-arguments.ts";
import type { AccountMember, SharedAccount } from "./shared-account.ts";

interface Invocation {
  word: string;
  line: string;
  via: "direct" | "mention" | "prefix";
}

type Ctx = BotContext<unknown> & Record<string, unknown>;

export class CommandRouter implements AccountMember {
  readonly #commands: Command[] = [];
  readonly #byName = new Map<string, Command>();
  readonly #prefix: string;
  /** The generated `help`, until the bot declares its own. */
  #help: Command | undefined;
  #warnedGroups = false;
  readonly #unknownGroup = unknownGroupCheck();
  /** The other bots of the daemon on the bot's account, when it runs in one. */
  readonly #account: SharedAccount | undefined;

  constructor(
    private readonly composer: Composer<BotContext<unknown>>,
    options: { prefix?: string | undefined; account?: SharedAccount | undefined } = {},
  ) {
    this.#prefix = options.prefix ?? "";
    this.#account = options.account;
    this.#help = generatedHelp(this);
    this.#add(this.#help);
  }

  /** The commands, the generated `help` included unless the bot declared its own. */
  get commands(): readonly Command[] {
    return this.#commands;
  }

  get declared(): readonly Command[] {
    return this.#commands.filter((c) => c !== this.#help);
  }

  /** Every command's name, each subcommand's after its parent's (`"standup report"`), as a prompt's `commands` names them. */
  names(): string[] {
    const of = (c: Command, name: string): string[] => [
      name,
      ...c.subcommands.flatMap((s) => of(s, `${name} ${s.name}`)),
    ];
    return this.#commands.flatMap((c) => of(c, c.name));
  }

  get prefix(): string {
    return this.#prefix;
  }

  /**
   * Whether any command checks roles or groups: the bot then keeps the users / groups caches
   * current (each costs a fetch of every user / group at each registration).
   */
  get needs(): { users: boolean; groups: boolean } {
    const allows = this.#commands.flatMap((c) => [c, ...c.subcommands]).map((c) => c.allow);
    return {
      users: allows.some((a) => a?.role !== undefined),
      groups: allows.some((a) => a?.groups !== undefined),
    };
  }

  /**
   * `bot.command(name, options, handler)`; a declared `help` replaces the generated one. A name of
   * two words (`"standup skip"`) declares a subcommand of a command declared before it.
   */
  add(name: unknown, options: CommandOptions<never, ArgShape, ArgShape>, handler: unknown): void {
    const words = typeof name === "string" ? name.trim().split(/\s+/) : [];
    if (words.length > 1) {
      this.#addSubcommand(name as string, words, options, handler);
      return;
    }
    if (this.#help && String(name).toLowerCase() === "help") {
      this.#remove(this.#help);
      this.#help = undefined;
    }
    this.#add(checkCommand(name, options, handler, new Set(this.#byName.keys())));
  }

  describe(): CommandDescription[] {
    return this.#commands.map(describeCommand);
  }

  usage(c: Command): string {
    return usageOf(c, this.#prefix);
  }

  #addSubcommand(
    name: string,
    words: string[],
    options: CommandOptions<never, ArgShape, ArgShape>,
    handler: unknown,
  ): void {
    const where = `bot.command(${JSON.stringify(name)})`;
    if (words.length > 2)
      throw new BotSetupError(`${where}: subcommands go one level deep: "command subcommand".`);
    const bad = words.find((w) => !isCommandName(w));
    if (bad !== undefined)
      throw new BotSetupError(`${where}: each word must be ${NAME_RULE}; got ${JSON.stringify(bad)}.`);
    const parent = this.#byName.get(words[0]!.toLowerCase());
    if (parent === undefined || parent === this.#help)
      throw new BotSetupError(
        `${where}: declare the command "${words[0]}" (its handler runs for a bare "${words[0]}") before its subcommands.`,
      );
    const taken = new Set(parent.subcommands.flatMap((c) => [c.name, ...c.aliases]));
    parent.subcommands.push(checkCommand(words[1], options, handler, taken, parent));
  }

  #add(c: Command): void {
    this.#commands.push(c);
    for (const n of [c.name, ...c.aliases]) this.#byName.set(n, c);
  }

  #remove(c: Command): void {
    this.#commands.splice(this.#commands.indexOf(c), 1);
    for (const n of [c.name, ...c.aliases]) this.#byName.delete(n);
  }

  /** The middleware, placed where the bot declared its first command. */
  readonly middleware: Middleware<BotContext<unknown>> = (ctx, next) => {
    // An event that failed its schema is not read as a command.
    if (ctx.event.type !== "message" || ctx.eventIssue !== undefined) return next();
    if (ctx.sender?.isBot === true) return next();
    const call = this.#invocation(ctx.event, ctx.bot);
    if (call === undefined) return next();
    const command = this.#runnable(call.word);
    if (command) return this.#run(command, ctx as Ctx, call);
    // Another bot of the account runs it.
    if (this.#account?.others(this).some((m) => m.named(ctx.event, ctx.bot) !== undefined)) return next();
    if (call.via === "prefix" && this.#hint(call.word) === undefined) return next();
    return this.#unknown(ctx, next, call);
  };

  /** The command `word` names, unless it is the generated `help` and another bot answers it. */
  #runnable(word: string): Command | undefined {
    const command = this.#byName.get(word.toLowerCase());
    return command !== undefined && command === this.#help && !this.#speaks() ? undefined : command;
  }

  /** Whether this bot answers what no bot of its account knows: it is alone, or their first. */
  #speaks(): boolean {
    return this.#account?.speaks(this) ?? true;
  }

  /** A command name close to `word`, this bot's first, else another's of its account; with its prefix. */
  #hint(word: string): string | undefined {
    const own = suggest(word, this.#byName.keys());
    if (own !== undefined) return `${this.#prefix}${own}`;
    for (const m of this.#account?.others(this) ?? []) {
      const hint = suggest(
        word,
        m.declared.flatMap((c) => [c.name, ...c.aliases]),
      );
      if (hint !== undefined) return `${m.prefix}${hint}`;
    }
    return undefined;
  }

  /**
   * The name of the command `event` runs, if it is a message naming one, with its subcommand's
   * (`"standup report"`): a dialog's prompt lets some run while it waits.
   */
  named(event: AnyEvent, bot: SelfRef): string | undefined {
    if (event.type !== "message") return undefined;
    const call = this.#invocation(event, bot);
    let command = call && this.#byName.get(call.word.toLowerCase());
    if (command === undefined) return undefined;
    let name = command.name;
    for (let line = call!.line; ; ) {
      const [, first = "", after = ""] = /^(\S+)\s*([\s\S]*)$/.exec(line) ?? [];
      command = subcommandOf(command, first);
      if (command === undefined) return name;
      [name, line] = [`${name} ${command.name}`, after];
    }
  }

  #invocation(event: AnyEvent, bot: SelfRef): Invocation | undefined {
    const via = addressOf(event, bot);
    const prefix = this.#prefix;
    let text: string;
    if (via !== undefined) {
      text = textOf(event, bot);
      if (prefix !== "" && text.startsWith(prefix)) text = text.slice(prefix.length);
    } else {
      const content = (event as { message: { content: string } }).message.content.trimStart();
      if (prefix === "" || !content.startsWith(prefix)) return undefined;
      text = content.slice(prefix.length);
    }
    const [, word = "", line = ""] = /^\s*(\S*)\s*([\s\S]*)$/.exec(text) ?? [];
    return { word, line, via: via === "direct" || via === "mention" ? via : "prefix" };
  }

  async #run(parent: Command, ctx: Ctx, word: Invocation): Promise<void> {
    // A first word naming a subcommand picks it; otherwise the line is the command's own.
    const [, first = "", after = ""] = /^(\S+)\s*([\s\S]*)$/.exec(word.line) ?? [];
    const sub = subcommandOf(parent, first);
    const command = sub ?? parent;
    const call = sub ? { ...word, word: `${word.word} ${first}`, line: after } : word;
    const name = fullName(command);
    // Its checks (a role's lookup) and its handler: a timeout's line names the command.
    (ctx as InHandler)[IN_HANDLER] = command.made;
    const parsed = parseArguments(command, call.line);
    ctx.args = parsed.ok ? parsed.args : {};
    ctx.options = parsed.ok ? parsed.options : {};
    ctx.command = { name, invokedAs: call.word };
    if (!(await this.#allowed(command, ctx))) {
      await ctx.reply(`Sorry, only ${whoMay(command)} may run \`${this.#prefix}${name}\`.`);
      return;
    }
    if (!parsed.ok) {
      const help = this.#help ? ` (\`${this.#prefix}help ${name}\` for more)` : "";
      const problems = parsed.problems.join("; ");
      const end = /[.?!]$/.test(problems) ? "" : ".";
      await ctx.reply(
        `\`${this.#prefix}${call.word}\`: ${problems}${end}\nUsage: \`${this.usage(command)}\`${help}`,
      );
      return;
    }
    await command.handler(ctx as never);
  }

  async #allowed(command: Command, ctx: Ctx): Promise<boolean> {
    const allow = command.allow;
    if (allow === undefined) return true;
    const sender = ctx.sender!;
    if (allow.role) {
      // From the users cache, seeded at registration; a user it lacks costs one (cached) request.
      const role = sender.role ?? roleName((await ctx.users.get(sender.id))?.role);
      if (isAtLeast(role, allow.role)) return true;
    }
    if (allow.groups) {
      if (!ctx.groups.seeded && !this.#warnedGroups) {
        this.#warnedGroups = true;
        ctx.log.warn(
          "commands: the user groups are unknown (the queue did not fetch them); group checks refuse",
        );
      }
      for (const g of allow.groups)
        if (this.#unknownGroup(ctx.groups, g))
          ctx.log.warn(
            { group: g },
            `commands: \`${command.name}\` is allowed to the group "${g}", but the server has no such group, so nobody is admitted through it: check the group's name in its allow`,
          );
      if (allow.groups.some((g) => ctx.groups.has(g, sender.id))) return true;
    }
    return allow.when ? (allow.when as (c: Ctx) => boolean | Promise<boolean>)(ctx) : false;
  }

  /**
   * Pass an unknown command on; answer it once the rest of the chain is done if nothing took it.
   * When the rest ran synchronously, so does this (no promise for a message a handler took).
   */
  #unknown(ctx: BotContext<unknown>, next: NextFunction, call: Invocation): unknown {
    const rest = next();
    const untaken = () => this.composer.passedThrough(ctx);
    if (finishedSynchronously(rest)) return untaken() ? this.#answerUnknown(ctx, call) : undefined;
    return rest.then(() => (untaken() ? this.#answerUnknown(ctx, call) : undefined));
  }

  async #answerUnknown(ctx: BotContext<unknown>, call: Invocation): Promise<void> {
    if (!this.#speaks()) return;
    const help = this.#byName.get("help");
    if (call.word === "" && help) {
      await help.handler(Object.assign(ctx, { args: {}, options: {} }) as never);
      return;
    }
    const hint = this.#hint(call.word);
    // Close to no command, it may be another bot's of the account (see shared-account.ts).
    if (hint === undefined && this.#account?.shared(this)) return;
    const list = help ? ` Say \`${this.#prefix}help\` for the list.` : "";
    await ctx.reply(
      `I don't know the command \`${this.#prefix}${call.word}\`.${hint ? ` Did you mean \`${hint}\`?` : ""}${list}`,
    );
  }

  /** The text of the generated help: the list, a command's, or a subcommand's. */
  helpText(topic: string | undefined, subtopic?: string): string {
    const others = this.#account?.others(this) ?? [];
    const list = () => helpList(this.#commands, this.#prefix, others);
    if (topic === undefined) return list();
    const c = this.#byName.get(topic.toLowerCase().replace(this.#prefix, ""));
    const owner = c ? undefined : others.find((m) => declares(m, topic));
    if (owner) return owner.helpText(topic, subtopic);
    if (c && subtopic === undefined) return helpFor(c, this.#prefix);
    const sub = c && subcommandOf(c, subtopic!);
    if (sub) return helpFor(sub, this.#prefix);
    if (c) {
      const hint = suggest(
        subtopic!,
        c.subcommands.map((s) => s.name),
      );
      return `\`${c.name}\` has no subcommand \`${subtopic}\`.${hint ? ` Did you mean \`${c.name} ${hint}\`?` : ""}\n\n${helpFor(c, this.#prefix)}`;
    }
    const names = [
      ...this.#byName.keys(),
      ...others.flatMap((m) => m.declared.flatMap((d) => [d.name, ...d.aliases])),
    ];
    const hint = suggest(topic, names);
    return `There is no command \`${topic}\`.${hint ? ` Did you mean \`${hint}\`?` : ""}\n\n${list()}`;
  }
}

/** Whether another bot of the account declares the command `topic` (with its prefix or without). */
function declares(m: AccountMember, topic: string): boolean {
  const word = topic.toLowerCase().replace(m.prefix, "");
  return m.declared.some((c) => c.name === word || c.aliases.includes(word));
}

/** The subcommand of `c` named (or aliased) `word`, case-insensitively. */
function subcommandOf(c: Command, word: string): Command | undefined {
  if (c.subcommands.length === 0 || word === "") return undefined;
  const lower = word.toLowerCase();
  return c.subcommands.find((s) => s.name === lower || s.aliases.includes(lower));
}

// One schema for every bot's generated help (zod schemas are immutable; a few KB each).
const helpArgs: Command["args"] = [
  ["command", z.string().optional().describe("a command's name")],
  ["subcommand", z.string().optional().describe("one of its subcommands")],
];

function generatedHelp(router: CommandRouter): Command {
  return {
    name: "help",
    aliases: [],
    description: "the commands, or how to use one",
    args: helpArgs,
    rest: false,
    options: [],
    examples: [],
    allow: undefined,
    handler: ((ctx: BotContext<unknown> & { args: { command?: string; subcommand?: string } }) =>
      ctx.reply(router.helpText(ctx.args.command, ctx.args.subcommand))) as never,
    parent: undefined,
    subcommands: [],
    made: new Registration('the generated command "help"', false),
  };
}
