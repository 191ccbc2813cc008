/**
 * A dead letter replayed (an operator's `bothost failed retry`, a kept delivery, a run the stop
 * cut): ordered with its conversation and run like a live event, bypassing the ledger (its message
 * was recorded as handled when it was kept). A delivery kept before it ever ran (an outgoing
 * webhook's, answered while the bot was not ready) goes through the ledger instead, at every
 * replay (a failed one keeps it unrecorded): the server may repeat it (its answer lost, a kill
 * before it was sent), and whichever of the letter and the repeat comes second runs nothing; the
 * letter's run is recorded once handled, and released if not (the repeat then runs). The letter
 * of a delivery's run (the stop cut it, or it failed) is recorded once handled as well, and a
 * repeat meanwhile runs nothing: its mark, written after the letter, may have been lost (a kill
 * between the two), and the repeat would then run it a second time.
 *
 * A dialog's letter runs only if it is still marked when its turn comes: its dialog, begun again
 * by a replay of it that a crash cut, is taken up from its log at the next start ahead of it, and
 * that run, failed, keeps the letter (handler-failures-ends.ts); begun again once more, it would
 * make the run the start just kept.
 *
 * Given its turns among the bot's replays (replay-turns.ts), its first attempt waits for its turn
 * with its conversation held and its concurrency slot given back, and begins once it has it.
 */
import type { Logger } from "pino";
import { type DeadLetter, type DeadLetters, isKeptDelivery } from "../state/dead-letters.ts";
import { type AnyEvent, reviveEvent } from "../wire/events.ts";
import type { QueueTask } from "./conversation-queue.ts";
import type { DialogRecord } from "./dialogs/dialog-record.ts";
import { v1Carried } from "./dialogs/dialog-v1.ts";
import { ledgerIdOf } from "./event-fields.ts";
import type { Incoming } from "./incoming.ts";
import type { LedgerCommits } from "./ledger-commits.ts";
import type { LetterTurns } from "./replay-turns.ts";
import { WebhookLedger } from "./webhook-ledger.ts";

/** Logged (info) when a dialog's letter, kept by its dialog's run meanwhile, is not replayed. */
export const KEPT_MEANWHILE_LINE =
  "a dialog's dead letter was kept again by its dialog's run meanwhile: not replayed";

export interface LetterReplayParts {
  log: Logger;
  letters: DeadLetters | undefined;
  /** The ledger read at start and how its records are committed (none before the start read it). */
  commits: LedgerCommits | undefined;
  /** The pipeline's stages 4 and 5, as a queue task. */
  run: QueueTask<Incoming>;
  /** Queue `incoming` (of `event`) on its conversation, to run as `task`. */
  push(event: AnyEvent, issue: string | undefined, incoming: Incoming, task: QueueTask<Incoming>): void;
}

/** Replay `letter` (its attempts in `turns`): resolves true when it was handled (the letter is then removed). */
export function replayLetter(
  p: LetterReplayParts,
  letter: DeadLetter,
  turns?: LetterTurns,
): Promise<boolean> {
  const { event, issue } = reviveEvent(letter.event);
  const commits = p.commits;
  // Webhook mode's ledger: a message begun and never finished holds no cursor back there.
  const held = isKeptDelivery(letter);
  const delivery = letter.source === "webhook" && letter.dialog === undefined;
  const ledger = delivery && commits?.ledger instanceof WebhookLedger ? commits.ledger : undefined;
  const id = ledger ? ledgerIdOf(event) : undefined;
  if (held && id !== undefined && ledger?.isDuplicate(id)) {
    p.log.info(
      { deadLetter: letter.id, messageId: id },
      "a kept delivery's message was handled already (the server repeated it): its dead letter is removed",
    );
    // A removal refused: the letter stays, and the next look finds its message handled again.
    return (p.letters?.remove(letter.id) ?? Promise.resolve()).then(
      () => true,
      () => false,
    );
  }
  if (id !== undefined) ledger?.begin(id);
  // Handled: recorded before the letter is removed, so that no crash between the two leaves
  // neither (a repeat at the next start would run again). Not handled (kept again, or left to
  // the next start): not recorded, so that it runs then.
  let recorded: Promise<void> | undefined;
  const record = () => (recorded ??= Promise.resolve(id === undefined ? undefined : commits?.finish(id)));
  return new Promise((replayed) => {
    const onReplayed = (handled: boolean) => {
      if (!handled) {
        if (id !== undefined) ledger?.release(id);
        if (held && id !== undefined) {
          p.log.info(
            { deadLetter: letter.id, messageId: id },
            "a kept delivery's replay was not handled: its letter stays, and a repeat of it by the server runs",
          );
        }
        return replayed(false);
      }
      record().then(
        () => replayed(true),
        () => replayed(false),
      );
    };
    // A letter kept by the version before dialog logs carries its record in that version's form.
    const kept = letter.dialog as unknown as DialogRecord | undefined;
    const dialog = kept?.v === 2 ? kept : v1Carried(letter.dialog);
    const incoming: Incoming = {
      event,
      replayed: true,
      issue,
      reply: undefined,
      letter,
      onReplayed,
      ...(id === undefined ? {} : { recordHandled: record }),
      ...(dialog ? { dialog } : {}),
      ...(turns ? { turns } : {}),
    };
    const task = dialog ? whileMarked(p, letter.id) : p.run;
    p.push(event, issue, incoming, turns ? inTurn(turns, task) : task);
  });
}

/** `task`, begun once the letter's first attempt has its turn (its conversation held meanwhile). */
function inTurn(turns: LetterTurns, task: QueueTask<Incoming>): QueueTask<Incoming> {
  return (control, incoming) => {
    const wait = turns.first();
    if (wait === undefined) return task(control, incoming);
    if (control.resumeAfter(wait, task as QueueTask<unknown>)) return undefined;
    return wait.then(() => task(control, incoming));
  };
}

/** `p.run`, once the letter `id` is found still marked for replay (a store that fails the read: run). */
function whileMarked(p: LetterReplayParts, id: string): QueueTask<Incoming> {
  return (control, incoming) =>
    (p.letters?.get(id) ?? Promise.resolve(undefined)).then(
      (now) => {
        if (now === undefined || now.retryRequestedAt !== undefined) return p.run(control, incoming);
        p.log.info({ deadLetter: id }, KEPT_MEANWHILE_LINE);
        incoming.onReplayed?.(false);
        return undefined;
      },
      () => p.run(control, incoming),
    );
}
