/**
 * A cron job's occurrence through the failure stage (handler-failures.ts): its attempts, their
 * effect records, and what becomes of it once they failed.
 */

import type { Logger } from "../api/logger.ts";
import { type EffectRecord, type EffectRecords, SERVER_CLOCK_SLACK_S } from "../effects/effect-records.ts";
import type { JsonValue } from "../state/state-store.ts";
import { monotonicMs } from "../time/clock.ts";
import { withinAttemptTime } from "./attempt-timeout.ts";
import type { SendEffects } from "./context-types.ts";
import { outageOf, STORE_OUTAGE_LINE } from "./handler-failures-outage.ts";
import type { HandlerFailuresOptions, Settles } from "./handler-failures-types.ts";
import type { DispatchMetrics, RunJob } from "./incoming.ts";
import { LEFT_ENDED_LINE } from "./left-runs.ts";
import { fenced } from "./stop-cut.ts";

/**
 * Stages 4–5 for a cron job's occurrence: each attempt's sends are recorded under it, `keptMs` if
 * given (a re-run repeats none, and reads back the one in flight among the bot's messages since the
 * firing, less the server's clock's slack); a failed attempt runs again after a pause (a replayed
 * letter's attempts each in the bot's replay turn, given back at its pauses); once every
 * attempt failed, it is a dead letter (source "job"), or, failed on the store's outage, waits for it.
 * Counted as an event's runs are, under the type `cron_job`: each attempt handled or failed (or
 * failed on the store's outage), and the occurrence failed for good once kept.
 */
export function jobRunner(
  o: Pick<HandlerFailuresOptions, "letters" | "log" | "health" | "clock" | "handlerTimeoutMs"> & {
    effects: EffectRecords | undefined;
    metrics:
      | Pick<
          DispatchMetrics,
          "typeSeen" | "eventHandled" | "eventFailed" | "eventFailedForGood" | "storeOutage"
        >
      | undefined;
  },
  failures: Settles,
): RunJob {
  return async (occurrence, attempt, signal, letter, resumed = false, marked, keptMs, turns, task) => {
    const key = `j:${occurrence.job}@${occurrence.scheduledFor}`;
    const carried = (letter?.effects ?? []) as unknown as EffectRecord[];
    const since = Math.floor(Date.parse(occurrence.firedAt) / 1000) - SERVER_CLOCK_SLACK_S;
    // No effect (a `ctx.external` call above all) before the next start would see the run was
    // under way: else a crash in it is taken for an occurrence missed while down.
    let unmarked = marked;
    void marked?.then(() => {
      unmarked = undefined;
    });
    const before = marked && (() => unmarked);
    const records = keptMs === undefined ? o.effects : o.effects?.keptFor(keptMs);
    const effectsOf = (rerun: boolean): SendEffects | undefined =>
      records && { run: records.run(key, rerun, carried, false, before), after: undefined, since };
    const job = { job: occurrence.job, scheduledFor: occurrence.scheduledFor };
    const { type } = occurrence;
    // Its series from its first run, at 0: else its first failure's count would be born at 1,
    // unseen by an alert's increase().
    o.metrics?.typeSeen(type);
    const run = async (s: AbortSignal, effects: SendEffects | undefined) => {
      const started = monotonicMs();
      const seconds = () => (monotonicMs() - started) / 1000;
      try {
        await attempt(s, effects, key);
        o.metrics?.eventHandled(type, seconds());
      } catch (err) {
        const outage = outageOf(err);
        if (outage) {
          o.metrics?.storeOutage(type, seconds());
          // Once the outage is said (store-health.ts), each of its tries only at debug; a lost lease's too.
          const level = o.health?.repeats(err) || fenced(outage) ? "debug" : "warn";
          o.log[level]({ ...outage, ...job }, STORE_OUTAGE_LINE);
        } else if (!failures.stopped) o.metrics?.eventFailed(type, seconds()); // cut by the stop: no failure of its own
        throw err;
      }
    };
    let last = effectsOf(letter !== undefined || resumed);
    const counted = { event: occurrence, source: "job" as const, letter };
    // Its attempts ran out before this start (failed-attempts.ts): kept as a dead letter, not run.
    const ranOut = failures.countsRanOut ? failures.ranOutRun(counted) : undefined;
    try {
      if (ranOut) throw ranOut;
      // A replayed letter's first attempt waits for the bot's replay turn (replay-turns.ts).
      await turns?.first();
      // An occurrence under way at a crash, or a letter replayed: its first attempt here is counted
      // (failed-attempts.ts).
      await failures.begins(counted, resumed || letter !== undefined);
      // Bounded by the handler timeout as its later attempts are (handler-failures.ts).
      const first = last;
      await withinAttemptTime(o, { event: occurrence }, 1, signal, (s) => run(s, first));
      if (task?.left) return leftJobEnded(o.log, job);
      failures.ran(counted);
      if (letter) await o.letters?.remove(letter.id);
      return true;
    } catch (err) {
      if (task?.left) return leftJobEnded(o.log, job);
      if (!outageOf(err)) o.log.error({ err, ...job }, "cron job failed");
      // A job's run has no dialog: its outcome is handled (true) or kept (false).
      const outcome = await failures.settle(
        {
          event: occurrence,
          source: "job",
          ...(letter ? { letter } : {}),
          // Its later attempts take the turn, given back at each pause (handler-failures.ts).
          ...(turns ? { turns } : {}),
          ...(task ? { task } : {}),
          again: (s) => {
            last = effectsOf(true);
            return run(s, last);
          },
          effects: () => (last?.run.kept ?? []) as unknown as JsonValue[],
        },
        err,
      );
      // "replays": the stop cut its attempts, no failure for good.
      if (outcome === false) o.metrics?.eventFailedForGood(type);
      return outcome === true;
    }
  };
}

/** A job's run the stop left ended, the store closed: nothing is recorded; its occurrence, marked under way, runs again at the next start. */
function leftJobEnded(log: Logger, job: { job: string; scheduledFor: string }): false {
  log.warn(job, LEFT_ENDED_LINE);
  return false;
}
