/**
 * Every configured bot's dead letters at once: what `bothost failed` and the daemon's admin routes
 * read and act on. Ids name their bot (`moderator/12`), so one list covers the whole daemon.
 */

import { BothostError } from "../errors/bothost-error.ts";
import type { Clock } from "../time/clock.ts";
import { type DeadLetter, DeadLetters, type DeadLettersOptions, parseDeadLetterId } from "./dead-letters.ts";
import type { StateStore } from "./state-store.ts";

/** Which letters an operation acts on: some ids, or all (of one bot, or of every bot). */
export type DeadLetterSelection = { ids: readonly string[] } | { all: true; bot?: string };

/** What an operation did: the ids it acted on and those that named no letter. */
export interface DeadLetterOutcome {
  done: string[];
  missing: string[];
}

export class DeadLetterOffice {
  readonly #bots = new Map<string, DeadLetters>();
  readonly #clock: Pick<Clock, "now">;
  /** Called after {@link retry} marked letters: the daemon passes the requests to its bots at once. */
  onRetried: (() => Promise<void>) | undefined;

  /** Makes an operator's retry or drop durable before it is answered (the store's commit). */
  readonly #commit: (() => Promise<void>) | undefined;

  /**
   * `bots`: each configured bot and the options of its letters; `clock`: when a retry is asked for;
   * `commit`: the store's, when its writes are durable only once committed (the embedded store).
   */
  constructor(
    root: StateStore,
    bots: ReadonlyMap<string, DeadLettersOptions>,
    clock: Pick<Clock, "now">,
    commit?: () => Promise<void>,
  ) {
    this.#clock = clock;
    this.#commit = commit;
    for (const [name, options] of bots) this.#bots.set(name, new DeadLetters(root, name, options));
  }

  /** One bot's letters (refusing a bot the config does not have). */
  of(bot: string): DeadLetters {
    const letters = this.#bots.get(bot);
    if (letters) return letters;
    const known = [...this.#bots.keys()].join(", ");
    throw new BothostError("UNKNOWN_BOT", `no bot named "${bot}" in the config (bots: ${known})`);
  }

  /** The letters of one bot, or of every bot, each bot's oldest first. */
  async list(bot?: string): Promise<DeadLetter[]> {
    const bots = bot === undefined ? [...this.#bots.values()] : [this.of(bot)];
    return (await Promise.all(bots.map((b) => b.list()))).flat();
  }

  /** The letter with this id, or undefined (also for an id of a bot not in the config). */
  async get(id: string): Promise<DeadLetter | undefined> {
    const bot = parseDeadLetterId(id)?.bot;
    return bot === undefined ? undefined : this.#bots.get(bot)?.get(id);
  }

  /** Marks the letters for replay by the daemon (now if it runs, else at its next start). */
  async retry(selection: DeadLetterSelection, at = new Date(this.#clock.now())): Promise<DeadLetterOutcome> {
    const outcome = await this.#each(selection, (letters, id) => letters.requestRetry(id, at));
    if (outcome.done.length > 0) await this.#commit?.();
    if (outcome.done.length > 0) await this.onRetried?.();
    return outcome;
  }

  /** Deletes the letters for good. */
  async drop(selection: DeadLetterSelection): Promise<DeadLetterOutcome> {
    const outcome = await this.#each(selection, (letters, id) => letters.remove(id));
    if (outcome.done.length > 0) await this.#commit?.();
    return outcome;
  }

  async #each(
    selection: DeadLetterSelection,
    act: (letters: DeadLetters, id: string) => Promise<boolean>,
  ): Promise<DeadLetterOutcome> {
    const ids = "ids" in selection ? selection.ids : (await this.list(selection.bot)).map((l) => l.id);
    const outcome: DeadLetterOutcome = { done: [], missing: [] };
    for (const id of ids) {
      const letters = this.#bots.get(parseDeadLetterId(id)?.bot ?? "");
      const acted = letters !== undefined && (await act(letters, id));
      (acted ? outcome.done : outcome.missing).push(id);
    }
    return outcome;
  }
}
