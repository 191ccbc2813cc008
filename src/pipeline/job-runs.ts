/**
 * Stages 4–5 for a cron job's occurrence: each attempt's sends are recorded under the occurrence
 * (a re-run repeats none, and verifies the one in flight by a read-back of the bot's messages no
 * older than the firing); a failed attempt runs again after a pause and, when every attempt
 * failed, the occurrence is kept as a dead letter (source "job").
 */
import type { Logger } from "pino";
import type { EffectRecord, EffectRecords } from "../effects/effect-records.ts";
import type { DeadLetters } from "../state/dead-letters.ts";
import type { JsonValue } from "../state/state-store.ts";
import type { SendEffects } from "./context.ts";
import type { HandlerFailures } from "./handler-failures.ts";
import type { RunJob } from "./incoming.ts";

export interface JobRunnerOptions {
  effects?: EffectRecords;
  letters?: DeadLetters;
  log: Logger;
}

export function jobRunner(o: JobRunnerOptions, failures: HandlerFailures): RunJob {
  return async (occurrence, attempt, signal, letter) => {
    const key = `j:${occurrence.job}@${occurrence.scheduledFor}`;
    const carried = (letter?.effects ?? []) as unknown as EffectRecord[];
    const since = Math.floor(Date.parse(occurrence.firedAt) / 1000);
    const effectsOf = (rerun: boolean): SendEffects | undefined =>
      o.effects && { run: o.effects.run(key, rerun, carried), after: undefined, since };
    let last = effectsOf(letter !== undefined);
    try {
      await attempt(signal, last);
      if (letter) await o.letters?.remove(letter.id);
      return true;
    } catch (err) {
      o.log.error({ err, job: occurrence.job, scheduledFor: occurrence.scheduledFor }, "cron job failed");
      return failures.settle(
        {
          event: occurrence,
          source: "job",
          ...(letter ? { letter } : {}),
          again: (s) => {
            last = effectsOf(true);
            return attempt(s, last);
          },
          effects: () => (last?.run.made ?? []) as unknown as JsonValue[],
        },
        err,
      );
    }
  };
}
