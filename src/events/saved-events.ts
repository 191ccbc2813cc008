/**
 * The non-message events a bot received from its queue and has not finished handling, kept in its
 * state so that a kill (kill -9, a crash) loses none of them. The server cannot send them again:
 * the poll after a batch acknowledges it, and only messages are fetched again after a restart
 * (the delivery ledger). So a batch holding such events is written here, under one key in the
 * bot's runtime namespace, and committed before that poll goes out (one write per batch); each
 * event leaves the set once its run is over (handled, or kept as a dead letter), those removals
 * written together after the turn they happen in, made durable by the store's next commit. At a
 * start, what is still here runs again, once: an event run again at a start and still here at the
 * next one is dropped with a warning rather than run a third time.
 *
 * Messages are never kept here (the ledger catches them up), nor a press on a question's button
 * (the question's reactions are read again after every new queue).
 */
import type { Logger } from "pino";
import type { Dispatcher } from "../pipeline/dispatcher.ts";
import type { Incoming } from "../pipeline/incoming.ts";
import type { JsonValue, StateStore } from "../state/state-store.ts";
import { nextTurn } from "../time/clock.ts";
import { type ParsedEvent, reviveEvent } from "../wire/events.ts";

/** The key of the set in the bot's runtime namespace (beside the ledger's). */
export const SAVED_EVENTS_KEY = "unfinished-events";
/**
 * At most this many events are kept (the whole set is written at each batch): past it, events are
 * handled as they would be without the set, and a kill loses them.
 */
export const SAVED_EVENTS_CAP = 100;

/** A kept event: the queue that delivered it and its id there (its effect records' key), the event. */
interface Entry {
  q: string;
  id: number;
  event: JsonValue;
  /** When it was kept (epoch ms): its first run began no earlier, which bounds a run again's read-backs. */
  at?: number;
  /** Run again at a start already. */
  again?: true;
}

/** What a start runs again. */
export interface SavedEvent {
  /** Handed to {@link SavedEvents.done} once its run is over. */
  key: string;
  queue: string;
  raw: unknown;
  /** When it was kept (epoch ms); undefined for one kept by an older version. */
  keptAt: number | undefined;
}

const keyOf = (queue: string, id: number): string => `${queue}/${id}`;

export class SavedEvents {
  readonly #store: StateStore;
  readonly #commit: () => Promise<void>;
  readonly #log: Logger;
  readonly #cap: number;
  readonly #now: () => number;
  #entries = new Map<string, Entry>();
  /** Keys added since the last write: one whose run ends before it needs no write at all. */
  readonly #unwritten = new Set<string>();
  /** Writes go one after another, each of the set as it is when it is made. */
  #writes: Promise<unknown> = Promise.resolve();
  /** A write of removals waits for the end of the turn. */
  #removalsDue = false;
  /** The cap was reached and said so; said again once the set went below it. */
  #full = false;
  /** A save failed and said so; said again once one landed. */
  #failing = false;

  /** `now`: the bot's clock (epoch ms). */
  constructor(o: {
    store: StateStore;
    commit: () => Promise<void>;
    log: Logger;
    now: () => number;
    cap?: number;
  }) {
    this.#store = o.store;
    this.#now = o.now;
    this.#commit = o.commit;
    this.#log = o.log;
    this.#cap = o.cap ?? SAVED_EVENTS_CAP;
  }

  /** How many events are kept now. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * Read the set at a start: what it returns runs again now, marked so (written and committed
   * first); an event run again at an earlier start is dropped with a warning. Rejects when the
   * store cannot be read or written.
   */
  async open(): Promise<SavedEvent[]> {
    const stored = await this.#store.get(SAVED_EVENTS_KEY);
    const entries = Array.isArray(stored) ? (stored as unknown as Entry[]) : [];
    const now = new Map<string, Entry>();
    const again: SavedEvent[] = [];
    for (const entry of entries) {
      if (typeof entry?.q !== "string" || typeof entry.id !== "number") continue;
      const type = (entry.event as { type?: unknown } | null)?.type;
      if (entry.again) {
        this.#log.warn(
          { queueId: entry.q, eventId: entry.id, type },
          "an event run again at the last start did not finish before the daemon stopped: it is not run a third time",
        );
        continue;
      }
      const key = keyOf(entry.q, entry.id);
      now.set(key, { ...entry, again: true });
      again.push({ key, queue: entry.q, raw: entry.event, keptAt: entry.at });
    }
    this.#entries = now;
    if (entries.length > 0) {
      await this.#write();
      await this.#commit();
    }
    if (again.length > 0)
      this.#log.info({ events: again.length }, "running again the events a stop or a kill left unfinished");
    return again;
  }

  /**
   * Keep `parsed`, delivered by queue `queue`: its key for {@link done}, or undefined when the set
   * is full (then it is handled unsaved, and a kill loses it).
   */
  add(queue: string, parsed: ParsedEvent): string | undefined {
    if (this.#entries.size >= this.#cap) {
      if (!this.#full) {
        this.#full = true;
        this.#log.warn(
          { cap: this.#cap, type: parsed.event.type },
          `more than ${this.#cap} events wait unfinished: the next ones are not saved until some finish, and a kill of the daemon meanwhile loses them`,
        );
      }
      return undefined;
    }
    const id = parsed.event.id;
    const key = keyOf(queue, id);
    this.#entries.set(key, { q: queue, id, event: parsed.event as unknown as JsonValue, at: this.#now() });
    this.#unwritten.add(key);
    return key;
  }

  /**
   * Write the set and commit it: what the poll acknowledging the events just added waits for.
   * Never rejects: a store that fails it is reported (once until a save lands), and the poll goes
   * out anyway (a kill meanwhile loses those events, as it would without the set).
   */
  save(): Promise<void> {
    // Every event added since the last write is over already (a handler that returned at once).
    if (this.#unwritten.size === 0) return Promise.resolve();
    return this.#write()
      .then(() => this.#commit())
      .then(
        () => {
          if (this.#failing) this.#log.info({}, "unfinished events are saved in the state store again");
          this.#failing = false;
        },
        (err: unknown) => {
          if (!this.#failing)
            this.#log.warn(
              { err },
              "could not save the unfinished events in the state store: a kill of the daemon now loses them",
            );
          this.#failing = true;
        },
      );
  }

  /** The run of the event `key` is over: it leaves the set, written with the turn's other removals. */
  done(key: string): void {
    if (!this.#entries.delete(key)) return;
    if (this.#full && this.#entries.size < this.#cap) this.#full = false;
    if (this.#unwritten.delete(key) || this.#removalsDue) return;
    this.#removalsDue = true;
    void nextTurn().then(() => {
      this.#removalsDue = false;
      // Durable with the store's next commit (a save's, the ledger's, the stop's flush): a kill
      // before it runs the event again, its recorded effects made no second time.
      this.#write().catch((err: unknown) =>
        this.#log.debug({ err }, "could not write the finished events' removal from the saved set"),
      );
    });
  }

  /** The set as it is when the write is made, after the writes before it. */
  #write(): Promise<void> {
    const write = this.#writes.then(() => {
      this.#unwritten.clear();
      const entries = [...this.#entries.values()];
      return entries.length === 0
        ? this.#store.delete(SAVED_EVENTS_KEY).then(() => {})
        : this.#store.set(SAVED_EVENTS_KEY, entries as unknown as JsonValue);
    });
    this.#writes = write.catch(() => {});
    return write;
  }
}

/**
 * Events about a moment, not kept: typing starts and stops expire within seconds on the server (a
 * client shows them 15 s at most), and presence is sent again as it changes; run again after a
 * restart, they would say what is no longer true.
 */
const EPHEMERAL: ReadonlySet<string> = new Set(["typing", "typing_edit_message", "presence"]);

/** The saved set of each bot's pipeline (one per dispatcher, across its starts). */
const sets = new WeakMap<Dispatcher, SavedEvents>();

/** The bot's saved set as one start of its queue source uses it. */
export class StartSaves {
  readonly #dispatcher: Dispatcher;
  readonly #set: SavedEvents;
  readonly #hooks: Dispatcher["saved"];
  readonly #types: readonly string[] | null;
  /** Read at the start's first registration (once, however many times that is tried). */
  #read = false;
  /** The events read then and not yet run again, oldest first (see {@link runDue}). */
  #again: SavedEvent[] = [];
  /** The save of the last batch with saved events, while under way: the next poll waits for it. */
  saving: Promise<void> | undefined;

  /** `types`: the event types kept (`null`: all but the ephemeral ones). */
  constructor(dispatcher: Dispatcher, log: Logger, types: readonly string[] | null) {
    this.#dispatcher = dispatcher;
    this.#types = types;
    const hooks = dispatcher.saved;
    this.#hooks = hooks;
    let set = sets.get(dispatcher);
    if (set === undefined) {
      set = new SavedEvents({ store: hooks.store, commit: hooks.commit, log, now: hooks.now });
      sets.set(dispatcher, set);
    }
    this.#set = set;
  }

  /**
   * Save `parsed` (no message) until its run is over: its key, or undefined when it is not saved
   * (typing or presence, about a moment; a type only the bot's waiting dialogs asked for, or a
   * press on a waiting question's button, both read again after every new queue; the set full).
   */
  keep(parsed: ParsedEvent, queue: string): string | undefined {
    const type = parsed.event.type;
    if (EPHEMERAL.has(type) || (this.#types !== null && !this.#types.includes(type))) return undefined;
    const buttons = this.#dispatcher.dialogs.buttons;
    if (
      parsed.known &&
      parsed.event.type === "reaction" &&
      buttons.placeOf(parsed.event.message_id) !== undefined
    )
      return undefined;
    return this.#set.add(queue, parsed);
  }

  /** Hand the saved event `key` to the pipeline; it leaves the set once its run is over. */
  accept(incoming: Incoming, key: string): void {
    if (!this.#dispatcher.accept(incoming, () => this.#done(key))) this.#set.done(key);
  }

  /** Write and commit the set, for the events just kept; {@link saving} until it is done. */
  save(): void {
    const saving = this.#set.save().then(() => {
      if (this.saving === saving) this.saving = undefined;
    });
    this.saving = saving;
  }

  /**
   * Read, once a start, the events a stop or a kill left unfinished, for {@link runDue}: each runs
   * again before the messages caught up that were sent after it reached the bot, and after those
   * sent before (still unhandled when it came: their runs go first, as they did the first time).
   */
  async readAgain(): Promise<void> {
    if (this.#read) return;
    const events = await this.#set.open();
    this.#read = true;
    // Oldest first; one kept by an older version (no time) before all.
    this.#again = events.sort((a, b) => (a.keptAt ?? 0) - (b.keptAt ?? 0));
  }

  /**
   * Run again, in their conversations' order, the events read at this start that reached the bot
   * no later than `sentAt` (epoch ms: when the message caught up next was sent); all without it.
   */
  runDue(sentAt?: number): void {
    const again = this.#again;
    let due = 0;
    while (due < again.length && (sentAt === undefined || (again[due]?.keptAt ?? 0) <= sentAt)) due++;
    for (const { key, queue, raw, keptAt } of due === 0 ? [] : again.splice(0, due)) {
      const { event, issue } = reviveEvent(raw);
      const incoming: Incoming = {
        event,
        replayed: true,
        issue,
        reply: undefined,
        queue,
        reachedAt: undefined,
        ...(keptAt === undefined ? {} : { keptAt }),
      };
      this.#dispatcher.rerun(incoming, () => this.#done(key));
    }
  }

  /** A saved event's run is over; one dropped by the stop's deadline stays saved, for the next start. */
  #done(key: string): void {
    if (!this.#hooks.dropping) this.#set.done(key);
  }
}
