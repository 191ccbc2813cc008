/**
 * The text of a progress left open by a run, read back from the server: its effect records keep
 * only fingerprints of what its messages show, so that ending it without its handler (an ended
 * dialog's note: left-open.ts) would otherwise replace what it showed by the failed note alone.
 */
import type { Logger } from "pino";
import { sleep } from "../../api/sleep.ts";
import { timersOf } from "../../time/clock.ts";
import type { ServerSteps } from "./server-steps.ts";
import { copyState, type ShownState } from "./shown.ts";
import { fingerprint, stored } from "./text-parts.ts";

/** What reading back takes besides the steps: the failed note, the pause between tries, where to log. */
export interface ReadBackOptions {
  failedNote: string;
  intervalMs: number;
  clock: Parameters<typeof timersOf>[0];
  signal: AbortSignal;
  log: Logger;
}

/**
 * `state`'s text as its messages show it, and `state` as read: each message that holds some of
 * the text (from the first final post on, once one was made) read once (GET /messages/{id}), in
 * order. A message's part is what it shows, with line breaks in place of the trailing whitespace
 * the server dropped (its record says how many characters it held). The open message is read
 * whatever its record says: an edit whose record was lost shows there; one showing its
 * placeholder still (as recorded, holding none of the text) adds nothing. A message the server
 * refuses (deleted, or out of the bot's reach) adds nothing either; closed, it holds none of the
 * text from then on, open, it is left to its edit (refused, as the run's would be). A text whose
 * last message shows what no record says, ending with `failedNote` below it (the ending made, its
 * answer lost), comes back without the note: ended again, it is not added twice. Shown as
 * recorded, it is the run's own text, kept whole even if its last words are the note's. A read that fails otherwise is tried
 * again after `intervalMs`, until `signal`.
 */
export async function readBack(
  steps: ServerSteps,
  state: ShownState,
  o: ReadBackOptions,
): Promise<{ state: ShownState; text: string }> {
  const next = copyState(state);
  const last = next.messages.length - 1;
  let text = "";
  for (let i = next.finalFrom ?? 0; i <= last; i++) {
    const m = next.messages[i]!;
    const open = i === last && !m.closed;
    if (!open && (m.gone || m.length === 0)) {
      m.length = 0;
      continue;
    }
    const content = await tried(() => steps.shows(m.id), m.id, o);
    if (content === undefined) {
      if (!open) m.length = 0;
      continue;
    }
    // Shown as recorded, the content is the text the run made, whatever words it ends with.
    const unrecorded = fingerprint(content) !== m.content;
    if (unrecorded) [m.content, m.length, m.edges] = [fingerprint(content), content.length, undefined];
    if (m.length === 0) continue;
    const ending = i === last && unrecorded ? withoutEnding(content, o.failedNote) : undefined;
    text += ending ?? partOf(content, m);
  }
  return { state: next, text };
}

/**
 * The part of the text message `m` holds, from what it shows: with what the server dropped of it
 * put back where it was (its edges); line breaks at its end for what no record says (an earlier
 * version's records).
 */
function partOf(content: string, m: ShownState["messages"][number]): string {
  const { lead, trail } = m.edges ?? { lead: 0, trail: "" };
  const part = `${"\n".repeat(lead)}${content}${trail}`;
  return part.length === m.length ? part : content.padEnd(m.length, "\n");
}

/** `content` without `failedNote` at its end, below the text or in its place (an ending made); else undefined. */
function withoutEnding(content: string, failedNote: string): string | undefined {
  const note = stored(failedNote);
  if (content === note) return "";
  if (!content.endsWith(`\n\n${note}`)) return undefined;
  return content.slice(0, -note.length).replace(/\s+$/u, "");
}

/** `read` until it answers; a failure is logged and tried again after a pause, until the signal. */
async function tried<T>(read: () => Promise<T>, messageId: number, o: ReadBackOptions): Promise<T> {
  for (;;) {
    try {
      return await read();
    } catch (err) {
      if (o.signal.aborted) throw err;
      o.log.warn({ err, messageId }, "progress: could not read back what its message shows; retrying");
      await sleep(timersOf(o.clock), o.intervalMs, o.signal);
    }
  }
}
