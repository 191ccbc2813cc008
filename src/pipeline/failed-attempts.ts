/**
 * The attempts a message's handler (a cron job's occurrence, a dialog's run) failed, kept in the
 * bot's store while it is retried (`<bot>/attempts`: `m:<id>`, `j:<job>@<time>`, `d:<id>:…`). A
 * kill -9 in the pause between two attempts leaves the message unmarked (the occurrence under way,
 * the dialog's answer not yet run through), and the next start runs it again (its catch-up, the
 * job's restart, the dialog's log): its count goes on from the attempts made before, so that the
 * handler runs at most `retries.attempts` times in all. One write per failed attempt before its
 * pause and one read per failed run, nothing for a run that succeeds at once, and nothing while
 * the store itself fails the run (its outage: see handler-failures.ts). A count left behind (the
 * message handled at once after a restart) expires after a day; a message first retried longer
 * ago than that starts counting again.
 */
import type { StateStore } from "../state/state-store.ts";
import type { AnyEvent } from "../wire/events.ts";
import type { DialogRecord } from "./dialogs/dialog-record.ts";
import { ledgerIdOf } from "./event-fields.ts";
import type { FailedRun } from "./handler-failures-types.ts";
import type { JobOccurrence } from "./incoming.ts";
import { isMessage } from "./stop-cut.ts";

const KEPT_MS = 86_400_000;

/**
 * A dialog's run, by what it runs for: its step, and the answers and unanswered ends (a deadline,
 * a deleted question) its log records. A failed run appends values and effects but no answer, so
 * its attempts, and its run again from the log after a crash, share the key; the next answer or
 * deadline makes another.
 */
function dialogRunKey(dialog: DialogRecord): string {
  const ends = dialog.steps.filter((s) => s.timedOut || s.deleted).length;
  return `d:${dialog.id}:${dialog.step}:${dialog.answered.length}:${ends}`;
}

export class FailedAttempts {
  readonly #store: StateStore | undefined;
  readonly #commit: () => Promise<void>;

  constructor(store: StateStore | undefined, commit: () => Promise<void>) {
    this.#store = store;
    this.#commit = commit;
  }

  /**
   * The key of `run`'s count: a message's own run, a dialog's, or a cron job's occurrence (run
   * again at the next start when a crash cut it); not a dead letter's replay.
   */
  #keyOf(run: FailedRun): string | undefined {
    if (this.#store === undefined || run.letter) return undefined;
    if (run.dialog !== undefined) return dialogRunKey(run.dialog as unknown as DialogRecord);
    if (run.event.type === "cron_job") {
      const { job, scheduledFor } = run.event as JobOccurrence;
      return `j:${job}@${scheduledFor}`;
    }
    const id = isMessage(run) ? ledgerIdOf(run.event as AnyEvent) : undefined;
    return id === undefined ? undefined : `m:${id}`;
  }

  /** The attempts of `run`'s message that failed before this process ran it (0 when unknown). */
  async before(run: FailedRun): Promise<number> {
    const key = this.#keyOf(run);
    if (key === undefined) return 0;
    const n = await this.#store!.get(key).catch(() => undefined);
    return typeof n === "number" ? n : 0;
  }

  /** `n` attempts of `run`'s message failed: kept (committed) before its pause. A store failing the write is no failure of the run. */
  async failed(run: FailedRun, n: number): Promise<void> {
    const key = this.#keyOf(run);
    if (key === undefined) return;
    await this.#store!.set(key, n, { ttlMs: KEPT_MS })
      .then(() => this.#commit())
      .catch(() => {});
  }

  /** `run`'s message is done with (handled, or kept as a dead letter): its count goes. */
  async done(run: FailedRun): Promise<void> {
    const key = this.#keyOf(run);
    if (key !== undefined) await this.#store!.delete(key).catch(() => {});
  }
}
