/**
 * Whether a message's handling failed for good, as the testing kit's `handled` and `progress` say
 * once the bot's ledger has the message: the dead letter that holds its run, read once a replay
 * the bot's stop left (a crash in a retry's pause) is over.
 */
import type { DeadLetter } from "../state/dead-letters.ts";
import type { InProcessDaemon } from "./in-process-daemon.ts";

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
 * Whether dead letter `l` holds the run of message `id`: its event's; for a dialog's run (kept under
 * its first message), the last answer its record holds (an earlier message's run went on to ask
 * its next question); a run on the dialog's deadline was on no message.
 */
function keptFor(l: DeadLetter, id: number): boolean {
  const dialog = l.dialog as { answered?: number[] } | undefined;
  const first = (l.event as { message?: { id?: number } }).message?.id;
  if (dialog === undefined) return first === id;
  if (l.source === "deadline") return false;
  const answered = dialog.answered ?? [];
  return answered.length === 0 ? first === id : answered.at(-1) === id;
}
