/**
 * Whether a message's handling failed for good, as the testing kit's `handled` and `progress` say
 * once the bot's ledger has the message: the dead letter that holds its run, read once a replay
 * the bot's stop left (a crash in a retry's pause) is over.
 */
import type { DeadLetter } from "../state/dead-letters.ts";
import type { InProcessDaemon } from "./in-process-daemon.ts";
import { handlerFailure } from "./wait-messages.ts";

/**
 * The dead letter of bot `name` that holds the run of message `id` (a delivery kept while its
 * handler ran past the reply deadline is no failure: removed once over), once any replay of it
 * left marked by the bot's stop is over (the letter gone, or unmarked as failed again). Rejects
 * with `late()` after `timeoutMs`.
 */
export async function finalLetter(
  daemon: InProcessDaemon,
  name: string,
  id: number,
  timeoutMs: number,
  late: () => Error,
): Promise<DeadLetter | undefined> {
  const letterOf = async () =>
    (await daemon.daemon.letters.list(name)).find((l) => l.runningIn === undefined && keptFor(l, id));
  await daemon.ledger.whenTrue(
    async () => (await letterOf())?.retryRequestedAt === undefined,
    timeoutMs,
    late,
  );
  return letterOf();
}

/**
 * Why bot `name` sent nothing after message `id`, when its handler threw on it (`""` otherwise), as
 * `ask` and `nextReply` end their line: kept as a dead letter (read from `daemon`, the bot running;
 * `recorded`: the ledger has the message), or to run again after a pause. A run failed for good is
 * recorded as handled too: without this, the line would say the bot handled it without answering.
 */
export async function failedRun(
  daemon: InProcessDaemon | undefined,
  logs: readonly Record<string, unknown>[],
  name: string,
  id: number,
  recorded: boolean,
): Promise<string> {
  if (recorded) {
    // Read from the letters, not the log: a dialog's run logs its failure under its first message.
    const letter = daemon
      ? (await daemon.daemon.letters.list(name)).find((l) => l.runningIn === undefined && keptFor(l, id))
      : undefined;
    // Recorded without a letter: handled (a later attempt succeeded).
    if (!letter) return "";
    const attempts = `${letter.attempts} attempt${letter.attempts === 1 ? "" : "s"}`;
    return ` (its handler failed every attempt (${attempts}, kept as dead letter ${letter.id}): ${letter.error.message})`;
  }
  const error = handlerFailure(logs, id);
  return error === undefined ? "" : ` (its handler failed (${error}) and runs again after a pause)`;
}

/**
 * Whether dead letter `l` holds the run of message `id`: its event's; for a dialog's run (kept under
 * its first message), the last answer its record holds (an earlier message's run went on to ask
 * its next question); a run on the dialog's deadline was on no message.
 */
/** Whether bot `name` keeps a dead letter of message `id` (a run to come, or failed for good). */
export async function letterKept(daemon: InProcessDaemon, name: string, id: number): Promise<boolean> {
  return (await daemon.daemon.letters.list(name)).some((l) => keptFor(l, id));
}

function keptFor(l: DeadLetter, id: number): boolean {
  const dialog = l.dialog as { answered?: number[] } | undefined;
  const first = (l.event as { message?: { id?: number } }).message?.id;
  if (dialog === undefined) return first === id;
  if (l.source === "deadline") return false;
  const answered = dialog.answered ?? [];
  return answered.length === 0 ? first === id : answered.at(-1) === id;
}
