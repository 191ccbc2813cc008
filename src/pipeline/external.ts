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
import { BothostError } from "../errors/bothost-error.ts";
import type { JsonValue } from "../state/state-store.ts";
import { failpoint } from "./failpoints.ts";

export type External = <T extends JsonValue>(name: string, fn: () => Promise<T> | T) => Promise<T>;

/** `fn`'s result as JSON sees it (what a replay hands back), or an error naming the call. */
export function jsonResult<T extends JsonValue>(name: string, result: T): T {
  const text = JSON.stringify(result);
  if (text === undefined)
    throw new BothostError(
      "EXTERNAL_RESULT",
      `ctx.external("${name}"): the result must be JSON (got ${typeof result}).`,
    );
  return JSON.parse(text) as T;
}

/** Each run's externals, numbered apart from its other effects (see {@link externalOf}). */
const apart = new WeakMap<EffectRun, EffectRun>();

/**
 * The `ctx.external` of a run. Each result is an effect of the run's event, numbered apart from
 * its other effects: a dialog's replay hands back what its log kept without calling, so the
 * numbers of the effects the log recorded stay as they were.
 */
export function externalOf(turn: { external: External } | undefined, run: EffectRun | undefined): External {
  const made: External =
    run === undefined
      ? async (name, fn) => inHand(jsonResult(name, await fn()))
      : async (name, fn) => {
          let own = apart.get(run);
          if (own === undefined) {
            own = run.nested("external");
            apart.set(run, own);
          }
          const act = async () => jsonResult(name, await fn());
          return inHand(await own.once(`external:${name}`, { act, durable: true }));
        };
  return turn === undefined ? made : (name, fn) => turn.external(name, () => made(name, fn));
}

/** `result`, once a test's crash point after it passed (see failpoints.ts). */
function inHand<T>(result: T): T {
  failpoint("external-made");
  return result;
}
