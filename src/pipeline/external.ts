/**
 * `ctx.external(name, fn)`: a call outside `ctx` (a `fetch`, a database query) made once per
 * event (a message, a cron job's occurrence, a keyed webhook request). Its result is recorded as
 * an effect of the run, committed before it is handed back, so a retry or a run again after a
 * crash gets the result instead of calling again; a dead letter carries it (nested-records.ts),
 * for a replay after the store's records expired; in a dialog, it is also kept in the dialog's
 * log (turn.ts) for every later replay. A call cut short before its record was committed is made
 * again.
 */

import type { EffectRun } from "../effects/effect-records.ts";
import { failpoint } from "../effects/failpoints.ts";
import { BothostError } from "../errors/bothost-error.ts";
import { NoRetry } from "../errors/no-retry.ts";
import type { JsonValue } from "../state/state-store.ts";

export type External = <T extends JsonValue>(name: string, fn: () => Promise<T> | T) => Promise<T>;

/**
 * `fn`'s result as JSON sees it (what a replay hands back), or an error naming the call. `fn` has
 * run by then (its effect is made): the error is a {@link NoRetry}, since a run again would call
 * it again; the event is kept as a dead letter at once.
 */
export function jsonResult<T extends JsonValue>(name: string, result: T): T {
  let text: string | undefined;
  try {
    text = JSON.stringify(result);
  } catch (err) {
    throw unrecordable(name, (err as Error).message, err); // a BigInt, a cycle
  }
  if (text === undefined) throw unrecordable(name, `got ${typeof result}`);
  return JSON.parse(text) as T;
}

/** The error of a call whose result no record can hold (`EXTERNAL_RESULT`, as its cause). */
function unrecordable(name: string, why: string, cause?: unknown): NoRetry {
  const err = new BothostError(
    "EXTERNAL_RESULT",
    `ctx.external("${name}"): the result must be JSON (${why}).`,
    cause === undefined ? undefined : { cause },
  );
  const made = "The call was made: the handler is not run again, which would make it again.";
  return new NoRetry(`${err.message} ${made}`, { cause: err });
}

/** The name of the run nested in a run that numbers its externals (see {@link externalOf}). */
export const EXTERNALS = "external";

/** Each run's externals, numbered apart from its other effects (see {@link externalOf}). */
const apart = new WeakMap<EffectRun, EffectRun>();

/** `run`'s externals' own run, made on first use. */
function externalsOf(run: EffectRun): EffectRun {
  let own = apart.get(run);
  if (own === undefined) {
    own = run.nested(EXTERNALS);
    apart.set(run, own);
  }
  return own;
}

/**
 * The `ctx.external` of a run. Each result is an effect of the run's event, numbered apart from
 * its other effects: a dialog's replay hands back what its log kept without calling, so the
 * numbers of the effects the log recorded stay as they were. Each value the log hands back takes
 * its number among the externals all the same, so that a call past the log has the number it had
 * when first made (a replay after a crash finds its record), not the number of one the log holds.
 */
export function externalOf(turn: { external: Turned } | undefined, run: EffectRun | undefined): External {
  const made: External =
    run === undefined
      ? async (name, fn) => inHand(jsonResult(name, await fn()))
      : async (name, fn) => {
          let called = false;
          const act = async () => {
            called = true;
            return jsonResult(name, await fn());
          };
          const result = await externalsOf(run).once(`external:${name}`, { act, durable: true });
          // Found in the records (a run again after a crash): no call was made here.
          return called ? inHand(result) : result;
        };
  if (turn === undefined) return made;
  const kept = run && (() => externalsOf(run).skip());
  return (name, fn) => turn.external(name, () => made(name, fn), kept);
}

/** A dialog turn's `external`: `kept` is told when the value comes from the dialog's log. */
type Turned = <T extends JsonValue>(name: string, fn: () => Promise<T>, kept?: () => void) => Promise<T>;

/** `result`, once a test's crash point after it passed (see failpoints.ts). */
function inHand<T>(result: T): T {
  failpoint("external-made");
  return result;
}
