/**
 * Bots of one daemon that sign in as one account each receive every message said to that account.
 * When several of them declare commands, they answer as one: each runs its own commands and leaves
 * a command another of them knows to that one; the generated `help` (listing all their commands)
 * and a likely typo of a command are answered by the first of them in the config only. A word close
 * to no command gets no answer while another bot of the account runs: it may be that bot's (a
 * handler's message, the answer to its `ctx.prompt`), which the first cannot know.
 */
import type { SelfRef } from "../../pipeline/addressed.ts";
import type { AnyEvent } from "../../wire/events.ts";
import type { Command } from "./command-spec.ts";

/** What a bot's command router shows the others of its account. */
export interface AccountMember {
  /** The command `event` names in this bot, if any (its generated `help` included). */
  named(event: AnyEvent, bot: SelfRef): string | undefined;
  /** The bot's `command_prefix`. */
  readonly prefix: string;
  /** The commands the bot declared (not its generated `help`). */
  readonly declared: readonly Command[];
  /** The generated help's text for `topic`, a command this bot declares. */
  helpText(topic: string, subtopic?: string): string;
}

/** A running bot of the account: its place in the config, and its commands if it declares any. */
export interface AccountBot {
  readonly order: number;
  readonly commands: AccountMember | undefined;
}

/** The running bots of one account, by bot name. */
export class SharedAccount {
  readonly #bots = new Map<string, AccountBot>();

  /** Bot `name` runs; replaces its earlier version. */
  join(name: string, bot: AccountBot): void {
    this.#bots.set(name, bot);
  }

  /** Bot `name` stopped; a newer version that joined since stays. */
  leave(name: string, bot: AccountBot): void {
    if (this.#bots.get(name) === bot) this.#bots.delete(name);
  }

  /** The commands of the other running bots of the account, in the config's order. */
  others(self: AccountMember): AccountMember[] {
    return [...this.#bots.values()]
      .sort((a, b) => a.order - b.order)
      .map((b) => b.commands)
      .filter((c): c is AccountMember => c !== undefined && c !== self);
  }

  /** Whether `self` answers for the account: it comes first in the config of the bots with commands. */
  speaks(self: AccountMember): boolean {
    let first: AccountBot | undefined;
    for (const b of this.#bots.values())
      if (b.commands !== undefined && (first === undefined || b.order < first.order)) first = b;
    return first === undefined || first.commands === self;
  }

  /** Whether another bot of the account runs, with commands or without. */
  shared(self: AccountMember): boolean {
    for (const b of this.#bots.values()) if (b.commands !== self) return true;
    return false;
  }
}
