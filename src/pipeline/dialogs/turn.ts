/**
 * One run of a message's handler seen as a turn of a dialog: the record it replays (none for the
 * message's first run), which prompt it is at, the `ctx.now()` and `ctx.random()` values it has
 * read, and whether it has parked (its last prompt waits for an answer, so the run is over and
 * its handler, suspended on a promise that never settles, is left to the garbage collector).
 */
import { BothostError } from "../../errors/bothost-error.ts";
import type { JsonValue } from "../../state/state-store.ts";
import { jsonResult } from "../external.ts";
import { stoppedBy } from "../router-error.ts";
import { DialogEnded, LogMoved } from "./dialog-log.ts";
import type { DialogRecord, LogEntry } from "./dialog-record.ts";

/**
 * A replay of a dialog met code that no longer matches its record (another question at a step,
 * another kind of effect at a number): the dialog is stopped rather than file an answer under the
 * wrong question.
 */
export class DialogChanged extends BothostError<"DIALOG_CHANGED"> {
  override readonly name = "DialogChanged";
  /** The prompt (from 1) where the code and the record part. */
  readonly step: number;
  /** What the person is told (the prompt's `texts.changed`), if the code says. */
  readonly note: string | undefined;

  constructor(step: number, message: string, note?: string) {
    super("DIALOG_CHANGED", message);
    this.step = step;
    this.note = note;
  }
}

/** What a run that has not parked waits for: nothing (one settled promise shared by every run). */
const NOTHING_WRITTEN: Promise<unknown> = Promise.resolve();

export class Turn {
  /** The dialog this run replays; undefined for a message's first run. */
  readonly record: DialogRecord | undefined;
  #step = 0;
  #read = 0;
  /** Values read past the record (undefined until the first). */
  #values: JsonValue[] | undefined;
  #names: (string | undefined)[] | undefined;
  /** Set when the run parked: it is over, whatever its handler's promise does. */
  parked = false;
  /** Told when the run parks (by the dispatcher, to end the run there). */
  onPark: (() => void) | undefined = undefined;
  /** Told once, when the run is past the steps its record holds (see {@link replaying}). */
  onLive: (() => void) | undefined = undefined;
  /** Prompts begun and not over (answered, failed, parked), and where the bot's code called the last. */
  #open = 0;
  #calledAt: Error | undefined;
  /** Set when the run ended with a prompt under way (not awaited): that prompt keeps no question. */
  over = false;

  constructor(record?: DialogRecord) {
    this.record = record;
  }

  /** A prompt begins, called from `at` (an error made there): the returned function says it is over. */
  opened(at: Error): () => void {
    this.#open++;
    this.#calledAt = at;
    return () => {
      this.#open--;
    };
  }

  /**
   * The run ended (its handlers returned or threw): a prompt still under way was not awaited, and
   * the run is over for it too. Returns where the bot's code called it, undefined when none was.
   */
  unawaited(): { at: Error | undefined } | undefined {
    if (this.parked || this.#open === 0) return undefined;
    this.over = true;
    return { at: this.#calledAt };
  }

  /** The prompts asked so far in this run. */
  get step(): number {
    return this.#step;
  }

  /**
   * True while the run replays the steps its record holds, up to the prompt that hands back the
   * newest answer (or deadline), or that asks again the question a `back` went back to: its
   * handler did all of that before, in the runs that took them.
   */
  get replaying(): boolean {
    const record = this.record;
    return record !== undefined && this.#step < record.steps.length + (record.reasks ? 1 : 0);
  }

  /** The next prompt's index (from 0). */
  nextStep(): number {
    const step = this.#step++;
    const live = this.onLive;
    if (live !== undefined && !this.replaying) {
      this.onLive = undefined;
      live();
    }
    return step;
  }

  /** The values read past the record, as log entries (with `ctx.external`'s names). */
  newValues(): LogEntry[] {
    const from = this.record?.values.length ?? 0;
    const values = this.#values ?? [];
    const entries: LogEntry[] = [];
    for (let i = from; i < values.length; i++) {
      const name = this.#names?.[i];
      entries.push(
        name === undefined
          ? { t: "val", v: values[i] as JsonValue }
          : { t: "val", v: values[i] as JsonValue, x: name },
      );
    }
    return entries;
  }

  /**
   * A value the handler reads (`ctx.now()`, `ctx.random()`): the recorded one when the dialog
   * has it, else `read()`, recorded.
   */
  value<T extends JsonValue>(read: () => T): T {
    const at = this.#read++;
    const recorded = this.#recorded(at, undefined);
    if (recorded !== undefined) return recorded as T;
    return this.#keep(at, read(), undefined);
  }

  /**
   * `ctx.external(name, fn)`: `fn`'s result, made once for the dialog and handed back from the
   * record on every replay (`kept` told so).
   */
  async external<T extends JsonValue>(name: string, fn: () => Promise<T> | T, kept?: () => void): Promise<T> {
    const at = this.#read++;
    const recorded = this.#recorded(at, name);
    if (recorded !== undefined) {
      kept?.();
      return recorded as T;
    }
    return this.#keep(at, jsonResult(name, await fn()), name);
  }

  #recorded(at: number, name: string | undefined): JsonValue | undefined {
    const record = this.record;
    if (record === undefined || at >= record.values.length) return undefined;
    const was = record.names[at] ?? undefined;
    if (was !== name) {
      throw new DialogChanged(
        this.#step + 1,
        `value ${at + 1} of the dialog was ${describe(was)} and is ${describe(name)} now: the code changed.`,
      );
    }
    return record.values[at] as JsonValue;
  }

  #keep<T extends JsonValue>(at: number, value: T, name: string | undefined): T {
    this.#values ??= [...(this.record?.values ?? [])];
    this.#values[at] = value;
    if (name !== undefined) {
      this.#names ??= [];
      this.#names[at] = name;
    }
    return value;
  }

  /**
   * The handler returned without asking every question its dialog recorded (the code, or what
   * runs it, changed: a command retired, another prefix): the replay ran other code, which
   * stops the dialog as a changed question does.
   */
  unfinished(): DialogChanged | undefined {
    const step = this.record?.steps[this.#step];
    if (step === undefined) return undefined;
    return new DialogChanged(
      this.#step + 1,
      `the dialog's question ${this.#step + 1} (${step.id}) is no longer asked (an update of the bot): it was stopped.`,
    );
  }

  /**
   * The log's append of the question the run parked at: the conversation waits for it, and its
   * message is handled once it landed.
   */
  written: Promise<unknown> = NOTHING_WRITTEN;

  /** The run waits for an answer now (`written`: its question's append): it ends here. */
  park(written?: Promise<unknown>): Promise<never> {
    if (written) this.written = written;
    this.parked = true;
    this.onPark?.();
    return new Promise<never>(() => {});
  }
}

const describe = (name: string | undefined) =>
  name === undefined ? "a clock or random value" : `ctx.external("${name}")`;

/**
 * Resolves true once `turn` parks, false once `ran` (a run's promise, or undefined for a run that
 * finished synchronously) settles first; rejects with what `ran` rejects with.
 */
export function untilParked(turn: Turn | undefined, ran: Promise<unknown> | undefined): Promise<boolean> {
  if (turn === undefined || ran === undefined) return Promise.resolve(ran).then(() => false);
  return new Promise<boolean>((resolve, reject) => {
    turn.onPark = () => resolve(true);
    ran.then(() => resolve(turn.parked), reject);
  });
}

/**
 * A run cut by the handler timeout (its `signal`, not the stop's) whose question's log failed
 * (`err`, not a refusal): for a new dialog's first question, the failure stage runs the message
 * again (runs.ts), and the dialog's entry stays until those runs are over.
 */
export function keptLater(signal: AbortSignal, err: unknown): boolean {
  return signal.aborted && !stoppedBy(signal) && !(err instanceof DialogEnded || err instanceof LogMoved);
}
