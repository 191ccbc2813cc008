/**
 * Every bot's dead letters at once: what `bothost failed` and the daemon's admin routes read and
 * act on. Ids name their bot (`moderator/12`), so one list covers the whole daemon. Letters of a bot
 * no longer in the config (removed or renamed) are listed too, marked `unconfigured`: they can be
 * read and dropped, not retried (no bot of this config would run them).
 */

import { BothostError } from "../errors/bothost-error.ts";
import { noBotNamed } from "../errors/did-you-mean.ts";
import type { Clock } from "../time/clock.ts";
import {
  type DeadLetter,
  DeadLetters,
  type DeadLettersOptions,
  letterBots,
  parseDeadLetterId,
} from "./dead-letters.ts";
import type { StateStore } from "./state-store.ts";

/** Which letters an operation acts on: some ids, or all (of one bot, or of every bot). */
export type DeadLetterSelection = { ids: readonly string[] } | { all: true; bot?: string };

/**
 * What an operation did: the ids it acted on, those that named no letter, and (a retry) those
 * refused because their bot is not in the config.
 */
export interface DeadLetterOutcome {
  done: string[];
  missing: string[];
  unconfigured?: string[];
  /**
   * A retry through a daemon: the ids of `done` whose bot does not run in it (another instance
   * runs it, or it is stopped here), taken by the instance running the bot or at its next start.
   */
  elsewhere?: string[];
}

export class DeadLetterOffice {
  readonly #bots = new Map<string, DeadLetters>();
  readonly #root: StateStore;
  readonly #clock: Pick<Clock, "now">;
  /**
   * Called after {@link retry} marked letters `ids`: the daemon passes the requests to its bots at
   * once, and answers the ids whose bot it does not run.
   */
  onRetried: ((ids: readonly string[]) => Promise<string[]>) | undefined;
  /**
   * Hides secrets in a letter's error as {@link list} and {@link get} read it: a letter kept before
   * its secrets were hidden when written (or by a bot no longer configured) is shown safe too.
   */
  redact: ((text: string) => string) | undefined;
  /**
   * The id of the daemon holding the office: a letter kept while its delivery's run goes on there
   * (`runningIn`, see kept-deliveries.ts) is no failure, so {@link list} leaves it out (and with it
   * any `--all`) and {@link get} marks it `running`. Unset (`bothost failed` on the store itself),
   * every letter is listed: the process that ran such a delivery is gone, its next start replays it.
   */
  readonly #daemonId: string | undefined;

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
    daemonId?: string,
  ) {
    this.#root = root;
    this.#clock = clock;
    this.#commit = commit;
    this.#daemonId = daemonId;
    for (const [name, options] of bots) this.#bots.set(name, new DeadLetters(root, name, options));
  }

  /** One bot's letters (refusing a bot the config does not have). */
  of(bot: string): DeadLetters {
    const letters = this.#bots.get(bot);
    if (letters) return letters;
    throw new BothostError("UNKNOWN_BOT", noBotNamed(bot, [...this.#bots.keys()], "the config"));
  }

  /**
   * The letters of one bot, or of every bot (configured ones first), each bot's oldest first;
   * none whose run still goes on in this daemon (see `daemonId`).
   */
  async list(bot?: string): Promise<DeadLetter[]> {
    const bots = bot === undefined ? await this.#every() : [await this.#named(bot)];
    const lists = await Promise.all(bots.map(async (b) => this.#marked(b, await b.list())));
    // Letters kept before bots were recorded: recording their bot now keeps them found once it is removed.
    const kept = bots.filter((b, i) => lists[i]!.length > 0 && this.#bots.has(b.bot));
    await Promise.all(kept.map((b) => b.register()));
    return lists.flat().filter((l) => !this.#runsHere(l));
  }

  /**
   * The letter with this id (marked `running` if its run goes on here), or undefined; refuses an
   * id naming a bot that is neither configured nor has kept letters (`UNKNOWN_BOT`).
   */
  async get(id: string): Promise<DeadLetter | undefined> {
    const bot = parseDeadLetterId(id)?.bot;
    const letters = bot === undefined ? undefined : await this.#named(bot);
    const letter = await letters?.get(id);
    if (!letters || !letter) return undefined;
    const [marked] = this.#marked(letters, [letter]);
    return this.#runsHere(letter) ? { ...marked!, running: true } : marked;
  }

  /** Whether the letter was kept while its delivery's run goes on in this daemon. */
  #runsHere(letter: DeadLetter): boolean {
    return letter.runningIn !== undefined && letter.runningIn === this.#daemonId;
  }

  /** Marks the letters for replay by the daemon (now if it runs, else at its next start). */
  async retry(selection: DeadLetterSelection, at = new Date(this.#clock.now())): Promise<DeadLetterOutcome> {
    const unconfigured: string[] = [];
    const outcome = await this.#each(selection, async (letters, id) => {
      if (this.#bots.has(letters.bot)) return letters.requestRetry(id, at);
      if (await letters.get(id)) unconfigured.push(id);
      return undefined;
    });
    if (unconfigured.length > 0) outcome.unconfigured = unconfigured;
    if (outcome.done.length === 0) return outcome;
    await this.#commit?.();
    const elsewhere = (await this.onRetried?.(outcome.done)) ?? [];
    if (elsewhere.length > 0) outcome.elsewhere = elsewhere;
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
    act: (letters: DeadLetters, id: string) => Promise<boolean | undefined>,
  ): Promise<DeadLetterOutcome> {
    const ids = "ids" in selection ? selection.ids : (await this.list(selection.bot)).map((l) => l.id);
    const outcome: DeadLetterOutcome = { done: [], missing: [] };
    // An id naming a bot that is neither configured nor has kept letters refuses them all, before any is acted on.
    const bots = ids.map((id) => parseDeadLetterId(id)?.bot ?? "");
    for (const bot of new Set(bots)) if (bot !== "") await this.#named(bot);
    for (const [i, id] of ids.entries()) {
      const letters = await this.#find(bots[i]!);
      // undefined: neither done nor missing (a retry refused, said by the caller).
      const acted = letters === undefined ? false : await act(letters, id);
      if (acted !== undefined) (acted ? outcome.done : outcome.missing).push(id);
    }
    return outcome;
  }

  /** The configured bots, then those not configured that have kept letters in the store. */
  async #every(): Promise<DeadLetters[]> {
    const recorded = await letterBots(this.#root);
    const gone = recorded.filter((name) => !this.#bots.has(name)).sort();
    return [...this.#bots.values(), ...gone.map((name) => this.#unconfigured(name))];
  }

  /** A configured bot's letters, or those a bot no longer configured kept; else undefined. */
  async #find(bot: string): Promise<DeadLetters | undefined> {
    const letters = this.#bots.get(bot);
    if (letters || bot === "") return letters;
    return (await letterBots(this.#root)).includes(bot) ? this.#unconfigured(bot) : undefined;
  }

  /** As {@link #find}, refusing a bot that is neither configured nor has kept letters. */
  async #named(bot: string): Promise<DeadLetters> {
    return (await this.#find(bot)) ?? this.of(bot);
  }

  /** The letters of a bot not in the config: read (their errors hidden by {@link redact}) and dropped only, no bound. */
  #unconfigured(bot: string): DeadLetters {
    return new DeadLetters(this.#root, bot, { max: Number.POSITIVE_INFINITY });
  }

  #marked(letters: DeadLetters, list: DeadLetter[]): DeadLetter[] {
    const shown = list.map((l) => this.#hidden(l));
    return this.#bots.has(letters.bot) ? shown : shown.map((l) => ({ ...l, unconfigured: true as const }));
  }

  /** `letter` with {@link redact} applied to its error's message and stack. */
  #hidden(letter: DeadLetter): DeadLetter {
    const redact = this.redact;
    if (redact === undefined || typeof letter.error !== "object" || letter.error === null) return letter;
    const { message, stack } = letter.error;
    const error = { ...letter.error, message: typeof message === "string" ? redact(message) : message };
    if (typeof stack === "string") error.stack = redact(stack);
    return { ...letter, error };
  }
}
