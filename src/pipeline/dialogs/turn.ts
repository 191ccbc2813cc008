/**
 * One run of a message's handler seen as a turn of a dialog: the record it replays (none for the
 * message's first run), which prompt it is at, the `ctx.now()` and `ctx.random()` values it has
 * read, and whether it has parked (its last prompt waits for an answer, so the run is over and
 * its handler, suspended on a promise that never settles, is left to the garbage collector).
 */
import { BothostError } from "../../errors/bothost-error.ts";
import type { JsonValue } from "../../state/state-store.ts";
import type { DialogRecord } from "./dialog-record.ts";

/**
 * A replay of a dialog met code that no longer matches its record (another question at a step,
 * another kind of effect at a number): the dialog is stopped rather than file an answer under the
 * wrong question.
 */
export class DialogChanged extends BothostError<"DIALOG_CHANGED"> {
  override readonly name = "DialogChanged";
  /** The prompt (from 1) where the code and the record part. */
  readonly step: number;

  constructor(step: number, message: string) {
    super("DIALOG_CHANGED", message);
    this.step = step;
  }
}

export class Turn {
  /** The dialog this run replays; undefined for a message's first run. */
  readonly record: DialogRecord | undefined;
  #step = 0;
  #read = 0;
  #values: JsonValue[] | undefined;
  /** Set when the run parked: it is over, whatever its handler's promise does. */
  parked = false;
  /** Told when the run parks (by the dispatcher, to end the run there). */
  onPark: (() => void) | undefined = undefined;

  constructor(record?: DialogRecord) {
    this.record = record;
  }

  /** The prompts asked so far in this run. */
  get step(): number {
    return this.#step;
  }

  /** The next prompt's index (from 0). */
  nextStep(): number {
    return this.#step++;
  }

  /** The values read so far (recorded ones first), for the record. */
  get values(): JsonValue[] {
    return this.#values ?? this.record?.values ?? [];
  }

  /**
   * A value the handler reads (`ctx.now()`, `ctx.random()`): the recorded one when the dialog
   * has it, else `read()`, recorded.
   */
  value<T extends JsonValue>(read: () => T): T {
    const at = this.#read++;
    const recorded = this.record?.values[at];
    if (recorded !== undefined) return recorded as T;
    this.#values ??= [...(this.record?.values ?? [])];
    const value = read();
    this.#values[at] = value;
    return value;
  }

  /** The run waits for an answer now: it ends here. */
  park(): Promise<never> {
    this.parked = true;
    this.onPark?.();
    return new Promise<never>(() => {});
  }
}

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
