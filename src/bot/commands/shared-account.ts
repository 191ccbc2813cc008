/**
 * Bots of one daemon that sign in as one account each receive every message said to that account.
 * When several of them declare commands, they answer as one: each runs its own commands and leaves
 * a command another of them knows to that one; what none of them knows, and the generated `help`
 * (listing all their commands), are answered by the first of them in the config only.
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

/** The running bots of one account that declare commands, by bot name, in the config's order. */
export class SharedAccount {
  readonly #members = new Map<string, { order: number; member: AccountMember }>();

  /** Bot `name` (the `order`-th of the config) runs with these commands; replaces its earlier version. */
  join(name: string, order: number, member: AccountMember): void {
    this.#members.set(name, { order, member });
  }

  /** Bot `name` stopped; a newer version that joined since stays. */
  leave(name: string, member: AccountMember): void {
    if (this.#members.get(name)?.member === member) this.#members.delete(name);
  }

  /** The other running bots of the account, in the config's order. */
  others(self: AccountMember): AccountMember[] {
    return [...this.#members.values()]
      .filter((m) => m.member !== self)
      .sort((a, b) => a.order - b.order)
      .map((m) => m.member);
  }

  /** Whether `self` answers for the account: it runs and comes first in the config. */
  speaks(self: AccountMember): boolean {
    let first: { order: number; member: AccountMember } | undefined;
    for (const m of this.#members.values()) if (first === undefined || m.order < first.order) first = m;
    return first?.member === self;
  }
}
