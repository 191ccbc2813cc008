/**
 * Dead letters: the events whose handler failed every attempt, kept so an operator can read them
 * (`bothost failed list`), replay them once the cause is fixed (`bothost failed retry`) or drop them.
 *
 * Each bot keeps its own, under `<bot>/dead-letters` in the state store, so they live wherever the
 * daemon's state lives (a file, Redis) and survive restarts. The store is bounded per bot: when a
 * new letter would pass the bound the oldest is evicted, counted, and reported through `onEvict`;
 * letters marked for replay neither count nor are evicted.
 */
import type { JsonValue, StateStore } from "./state-store.ts";

/**
 * Where a failed event came from (docs/operations/failures.md lists each); a dialog's run: what
 * ran it, its deadline, or (its first run) what started it.
 */
export type DeadLetterSource =
  | "queue"
  | "catch-up"
  | "webhook"
  | "job"
  | "replay"
  | "inbound-webhook"
  | "on-start"
  | "deadline";

/** One event whose handler failed every attempt. */
export interface DeadLetter {
  /** `<bot>/<n>`: what `bothost failed show|retry|drop` take. */
  id: string;
  bot: string;
  source: DeadLetterSource;
  /** The event as the handler received it (a job's letter holds the job's name and time). */
  event: JsonValue;
  /** The last attempt's error; message and stack have every secret of the bot replaced. */
  error: { name: string; message: string; stack?: string };
  attempts: number;
  /** ISO 8601. */
  firstFailedAt: string;
  lastFailedAt: string;
  /** Set by `bothost failed retry`: the daemon running the bot replays it (or does at its next start). */
  retryRequestedAt?: string;
  /** The effects its handler had made (messages sent…), so a replay repeats none of them. */
  effects?: JsonValue[];
  /** A dialog's record (its questions and answers), so a replay goes on from where it failed. */
  dialog?: JsonValue;
  /**
   * An event without a message id: the key its effect records are kept under, and the time its
   * first attempt ran (epoch seconds, less the server's clock's slack), which bounds the read-back
   * of a send whose answer was lost (pipeline/run-keys.ts).
   */
  records?: { key: string; since?: number };
  /**
   * An outgoing-webhook delivery answered before its handler finished (the bot was not ready, or
   * the handler still ran at the reply deadline): its message is not recorded as handled, so each
   * replay of it goes through the bot's webhook ledger, with the server's repeats of the delivery
   * (see replayLetter).
   */
  heldDelivery?: true;
  /**
   * The daemon (its id, new at each start of the process) whose run of this delivery still went
   * when it was kept: that daemon's dead-letter source leaves the letter to the run, which removes
   * it once over. Any other daemon's start replays it (the process running it was killed).
   */
  runningIn?: string;
  /**
   * Not stored: set in listings (`bothost failed list`, `show`) on a letter whose bot is not in the
   * config any more (removed or renamed); such a letter can be read and dropped, not retried.
   */
  unconfigured?: true;
  /**
   * Not stored: set by the daemon answering `bothost failed show` on a letter whose run still goes
   * on there (`runningIn` is its id): no failure, removed once the run is over. `failed list`
   * leaves such letters out.
   */
  running?: true;
}

/** What a runtime records when a handler gives up; the store adds the id. */
export type NewDeadLetter = Omit<DeadLetter, "id" | "bot" | "error" | "retryRequestedAt"> & {
  error: unknown;
};

export interface DeadLettersOptions {
  /** How many letters a bot keeps besides those marked for replay; one more evicts the oldest. */
  max: number;
  /** Removes secrets from an error's message and stack before it is stored. */
  redact?: (text: string) => string;
  /** Called once per evicted letter, after it is gone. */
  onEvict?: (evicted: DeadLetter) => void;
}

const ENTRY = "e:";
const SEQ = "seq";
const EVICTED = "evicted";
/**
 * Every bot's retry generation in one value (`{ bot: n }`), bumped by each retry request, so a
 * daemon sees a request for any of its bots with a single read. Its namespace starts with "_",
 * which no bot name does.
 */
const RETRY_NAMESPACE = "_dead-letters";
const RETRY_GENERATIONS = "retry-generations";
/**
 * Every bot that has kept a letter (`{ bot: true }`), in the same namespace: the store lists no
 * namespaces, and this is how the letters of a bot removed from the config are still found.
 */
const LETTER_BOTS = "bots";
/** Sequence numbers padded so the store's sorted listing is oldest first. */
const WIDTH = 12;

/**
 * Whether `letter` is an outgoing-webhook delivery kept before it was handled (`heldDelivery`; one
 * kept by an older version is known by its attempts alone, none until its first replay): its
 * replay is the delivery's run, as if it had come live.
 */
export function isKeptDelivery(letter: DeadLetter): boolean {
  return letter.source === "webhook" && (letter.heldDelivery === true || letter.attempts === 0);
}

/** Splits `bot/n` into its bot and number, or undefined when the id is not one of ours. */
export function parseDeadLetterId(id: string): { bot: string; seq: number } | undefined {
  const slash = id.lastIndexOf("/");
  const seq = Number(id.slice(slash + 1));
  if (slash <= 0 || !Number.isSafeInteger(seq) || seq < 1) return undefined;
  return { bot: id.slice(0, slash), seq };
}

/** One bot's dead letters. */
export class DeadLetters {
  readonly bot: string;
  readonly #store: StateStore;
  readonly #root: StateStore;
  readonly #generations: StateStore;
  readonly #o: DeadLettersOptions;
  #registered: Promise<void> | undefined;

  constructor(root: StateStore, bot: string, options: DeadLettersOptions) {
    this.bot = bot;
    this.#store = root.namespace(bot).namespace("dead-letters");
    this.#root = root;
    this.#generations = root.namespace(RETRY_NAMESPACE);
    this.#o = options;
  }

  /**
   * Stores a letter (evicting the oldest past the bound) and resolves it with its id.
   * `retryRequestedAt`: stored already marked for replay, in the same write as the letter (so no
   * failure can leave it unmarked), as {@link requestRetry} marks it; the retry generation is bumped after.
   */
  async add(
    letter: NewDeadLetter,
    options: { retryRequestedAt?: Date | undefined } = {},
  ): Promise<DeadLetter> {
    await this.register();
    const seq = await this.#bump(SEQ);
    const stored: DeadLetter = {
      ...letter,
      id: `${this.bot}/${seq}`,
      bot: this.bot,
      error: this.#describe(letter.error),
      ...(options.retryRequestedAt ? { retryRequestedAt: options.retryRequestedAt.toISOString() } : {}),
    };
    await this.#store.set(keyOf(seq), stored as unknown as JsonValue);
    if (options.retryRequestedAt) await this.#bumpGeneration();
    await this.#evictPastBound();
    return stored;
  }

  /**
   * Records, once per instance, that this bot keeps letters (see {@link letterBots}): before its
   * first letter, and by the office for letters kept before the record existed.
   */
  register(): Promise<void> {
    this.#registered ??= this.#register().catch((err: unknown) => {
      this.#registered = undefined;
      throw err;
    });
    return this.#registered;
  }

  async #register(): Promise<void> {
    if ((await letterBots(this.#root)).includes(this.bot)) return;
    await this.#generations.update(LETTER_BOTS, (current) => ({
      ...(isGenerations(current) ? current : {}),
      [this.bot]: true,
    }));
  }

  /** Every letter, oldest first. */
  async list(): Promise<DeadLetter[]> {
    const entries = await this.#store.list(ENTRY);
    return entries.map((e) => e.value as unknown as DeadLetter);
  }

  /** The letter with this id, or undefined. */
  async get(id: string): Promise<DeadLetter | undefined> {
    const key = this.#keyOf(id);
    return key === undefined
      ? undefined
      : ((await this.#store.get(key)) as unknown as DeadLetter | undefined);
  }

  /** Removes a letter; resolves false when there was none. */
  async remove(id: string): Promise<boolean> {
    const key = this.#keyOf(id);
    return key !== undefined && this.#store.delete(key);
  }

  /**
   * Marks a letter for replay: the daemon running the bot replays it at once when the request
   * came through it, within seconds when another process wrote it (the daemon watches
   * {@link retryGenerations}), or at its next start. Resolves false when there was no such letter.
   */
  async requestRetry(id: string, at: Date): Promise<boolean> {
    const key = this.#keyOf(id);
    if (key === undefined) return false;
    const next = await this.#store.update(key, (current) =>
      current === undefined ? undefined : { ...(current as object), retryRequestedAt: at.toISOString() },
    );
    if (next === undefined) return false;
    await this.#bumpGeneration();
    return true;
  }

  async #bumpGeneration(): Promise<void> {
    await this.#generations.update(RETRY_GENERATIONS, (current) => {
      const all = isGenerations(current) ? current : {};
      return { ...all, [this.bot]: (all[this.bot] ?? 0) + 1 };
    });
  }

  /** Changes whenever a retry of this bot's letters is requested. */
  async retryGeneration(): Promise<number> {
    return (await readGenerations(this.#generations))[this.bot] ?? 0;
  }

  /**
   * The letters marked for replay, oldest first. Read at each start of the bot, it also records
   * a bot with letters kept before such records existed (best effort: the next read tries again).
   */
  async retryRequested(): Promise<DeadLetter[]> {
    const letters = await this.list();
    if (letters.length > 0) await this.register().catch(() => {});
    return letters.filter((letter) => letter.retryRequestedAt !== undefined);
  }

  /**
   * Records another failed replay of a letter: its attempts, last error and time; unmarks it, or,
   * with `retryRequestedAt` (its attempts cut short by a stop), keeps it marked in the same write,
   * so that the bound never sees it unmarked.
   */
  async failedAgain(
    id: string,
    update: {
      error: unknown;
      attempts: number;
      lastFailedAt: string;
      effects?: JsonValue[];
      retryRequestedAt?: Date | undefined;
    },
  ): Promise<void> {
    const key = this.#keyOf(id);
    if (key === undefined) return;
    const error = this.#describe(update.error);
    const retry = update.retryRequestedAt;
    const kept = await this.#store.update(key, (current) => {
      if (current === undefined) return undefined;
      const { retryRequestedAt: _, ...rest } = current as unknown as DeadLetter;
      return {
        ...rest,
        error,
        attempts: rest.attempts + update.attempts,
        lastFailedAt: update.lastFailedAt,
        ...(update.effects ? { effects: update.effects } : {}),
        ...(retry ? { retryRequestedAt: retry.toISOString() } : {}),
      } as unknown as JsonValue;
    });
    if (retry && kept !== undefined) await this.#bumpGeneration();
  }

  /** How many letters the bound has evicted since the store was created. */
  async evicted(): Promise<number> {
    return ((await this.#store.get(EVICTED)) as number | undefined) ?? 0;
  }

  async #bump(counter: string): Promise<number> {
    return (await this.#store.update(counter, (n) => (typeof n === "number" ? n + 1 : 1))) as number;
  }

  /** The store key of a letter of this bot, or undefined for an id that is not one. */
  #keyOf(id: string): string | undefined {
    const parsed = parseDeadLetterId(id);
    return parsed?.bot === this.bot ? keyOf(parsed.seq) : undefined;
  }

  /**
   * Past the bound, the oldest letters go. Letters marked for replay neither go nor count: they are
   * work still owed (a webhook delivery answered while its bot was not ready, an operator's
   * retry), which leaves the list when it is replayed.
   */
  async #evictPastBound(): Promise<void> {
    const entries = await this.#store.list(ENTRY);
    const unmarked = entries.filter((e) => (e.value as unknown as DeadLetter).retryRequestedAt === undefined);
    for (const entry of unmarked.slice(0, Math.max(0, unmarked.length - this.#o.max))) {
      if (!(await this.#store.delete(entry.key))) continue;
      await this.#bump(EVICTED);
      this.#o.onEvict?.(entry.value as unknown as DeadLetter);
    }
  }

  #describe(err: unknown): DeadLetter["error"] {
    const redact = this.#o.redact ?? ((text: string) => text);
    if (err instanceof Error) {
      const described: DeadLetter["error"] = { name: err.name, message: redact(err.message) };
      if (err.stack !== undefined) described.stack = redact(err.stack);
      return described;
    }
    return { name: "Error", message: redact(typeof err === "string" ? err : safeJson(err)) };
  }
}

/**
 * Every bot's retry generation, in one read of `root` (the store the letters are kept in): what a
 * daemon compares to see which of its bots have new requests.
 */
export function retryGenerations(root: StateStore): Promise<Record<string, number>> {
  return readGenerations(root.namespace(RETRY_NAMESPACE));
}

/** Every bot that has kept a letter in `root`, configured or not (see {@link DeadLetters.register}). */
export async function letterBots(root: StateStore): Promise<string[]> {
  const value = await root.namespace(RETRY_NAMESPACE).get(LETTER_BOTS);
  return isGenerations(value) ? Object.keys(value) : [];
}

async function readGenerations(store: StateStore): Promise<Record<string, number>> {
  const value = await store.get(RETRY_GENERATIONS);
  return isGenerations(value) ? value : {};
}

function isGenerations(value: unknown): value is Record<string, number> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function keyOf(seq: number): string {
  return ENTRY + String(seq).padStart(WIDTH, "0");
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
