/**
 * What the person is told of an end they did not make (an operator's note, or that the bot's code
 * changed under their dialog), said once. The note is part of the end's entry, and the ended
 * dialog's header keeps it until it is said: one not said before the process stopped (a restart,
 * a crash, a send that failed) is said at the next start, in the conversation's order, however
 * long the bot was down; one the server refuses for good (a 400) is dropped. Before its send the
 * header's note is marked `sending` (committed, as an effect's pending record is: see
 * effects/effect-records.ts), and unmarked when the send certainly did not reach the server. A
 * note read marked at a start may have been said with its header not told (a crash, a store or
 * the server failing between the two): it is looked for first among the bot's messages there after
 * the dialog's last question (verify-send.ts), and said only if absent. One read unmarked was
 * never sent: said at once, one call.
 */
import type { Logger } from "pino";
import { laneOf } from "../../api/budget-line.ts";
import { isApiError } from "../../api/errors.ts";
import type { SendMessageParams } from "../../api/resources/messages.ts";
import { SERVER_CLOCK_SLACK_S } from "../../effects/effect-records.ts";
import { failpoint } from "../../effects/failpoints.ts";
import { isAmbiguous } from "../../effects/local-echo.ts";
import { findSent } from "../../effects/verify-send.ts";
import type { JsonValue } from "../../state/state-store.ts";
import { type AnyEvent, reviveEvent } from "../../wire/events.ts";
import type { BotContexts } from "../bot-contexts.ts";
import { replyTarget } from "../reply-target.ts";
import { placed } from "./dialog-moves.ts";
import type { DialogHead, DialogRecord, EndNote } from "./dialog-record.ts";
import type { Dialogs } from "./dialogs.ts";
import { endProgresses } from "./end-progresses.ts";

/** The log line of a note the server refused (a 400: the conversation gone, the person deactivated). */
export const NOTE_REFUSED = "the server refused to tell the person their dialog ended: the note is dropped";

/** What the person is told when the state store lost their dialog's log (see {@link sayLost}). */
export const LOST_NOTE =
  "Sorry, I lost track of our conversation (the bot's stored state was reset): please start again.";

/** What saying a note needs. */
export interface NoteParts {
  contexts: BotContexts;
  log: Logger;
  dialogs: Dialogs;
}

/**
 * The note that says `text` to a dialog's person, in its own conversation (where it began); in a
 * channel topic, named (the note is for them, not for the topic). Undefined without its origin.
 */
export function noteOf(
  contexts: BotContexts,
  dialog: DialogRecord | DialogHead,
  text: string,
): EndNote | undefined {
  const origin = "origin" in dialog ? dialog.origin : undefined;
  if (origin === undefined || origin === null) return undefined;
  const { event } = reviveEvent(origin);
  // Said where the dialog began (its origin), though its question may wait elsewhere (`where`).
  const inTopic = !(dialog.home?.[0] ?? dialog.conversation).startsWith("dm:");
  const content = inTopic ? `@**${dialog.userName}|${dialog.userId}** ${text}` : text;
  const self = contexts.self?.userId ?? -1;
  const to = placed(
    { ...replyTarget(event as AnyEvent, undefined, self), content },
    "moves" in dialog ? dialog.moves : undefined,
  );
  return { to: to as unknown as JsonValue, at: contexts.clock.now(), self };
}

/**
 * Say ended dialog `dialog`'s note, end the progresses it carries as the header holds it then
 * (end-progresses.ts: a run the end stopped adds those it opened), then clear it from the header.
 * A note marked `sending` (read from the header at a start) may have been said already, so it is
 * looked for first; one not marked is marked before its send. A send that fails, or a progress not
 * ended (`stop` cuts its calls), leaves the note in the header: the next start says it, or finds
 * it said, and ends them. The calls wait for the account's budget in `stop`'s lane (budget-line.ts:
 * a start's notes in the background lane), the send not cut by it.
 */
export async function sayNote(
  o: NoteParts,
  dialog: Pick<DialogHead, "id" | "asked">,
  note: EndNote,
  stop?: AbortSignal,
): Promise<void> {
  // Listed as being said while this runs (`bothost dialogs`): pending-notes.ts.
  o.dialogs.log.notes.saying(dialog.id, true);
  return say(o, dialog, note, stop).finally(() => o.dialogs.log.notes.saying(dialog.id, false));
}

async function say(
  o: NoteParts,
  dialog: Pick<DialogHead, "id" | "asked">,
  note: EndNote,
  stop?: AbortSignal,
): Promise<void> {
  const { contexts, log } = o;
  const to = note.to as unknown as SendMessageParams;
  const lane = { lane: laneOf(undefined, stop) };
  try {
    // At a start, before the bot registers: its client and its user as the note recorded it.
    const api = contexts.client;
    // `at` is this machine's time; the server stamps the note by its own clock, which may be behind.
    const since = Math.floor(note.at / 1000) - SERVER_CLOCK_SLACK_S;
    const newer = { after: dialog.asked ?? undefined, since };
    const said = note.sending === true && (await findSent(api, note.self, to, newer, lane));
    if (!said) {
      if (note.sending !== true && !(await marked(o, dialog.id))) return;
      failpoint("note-marked");
      await api.messages.send(to, lane).catch(async (err: unknown) => {
        // Certainly not made, nor refused for good (dropped below): the next start says it with no read-back.
        const refused = isApiError(err) && err.status === 400;
        if (!isAmbiguous(err) && !refused) await o.dialogs.log.noteSending(dialog.id, false).catch(() => {});
        throw err;
      });
    }
  } catch (err) {
    // Kept until said (however long the bot is down), but not one the server will never take.
    if (!(isApiError(err) && err.status === 400)) {
      log.warn({ err, dialog: dialog.id }, "could not tell the person their dialog ended");
      return;
    }
    log.warn({ err, dialog: dialog.id }, NOTE_REFUSED);
  }
  // The header as it stands now: a run stopped by the end kept there the progresses it opened.
  const head = await o.dialogs.log.head(dialog.id).then(
    (h) => h ?? null,
    (err: unknown) => {
      log.warn(
        { err, dialog: dialog.id },
        "could not read an ended dialog's note: the next start ends its progresses",
      );
      return undefined;
    },
  );
  if (head === undefined) return;
  const carried = head?.note ? { ...note, progress: head.note.progress } : note;
  if (!(await endProgresses(o, dialog.id, carried, stop))) return;
  await o.dialogs.log.noteSaid(dialog.id).catch((err: unknown) => {
    log.warn(
      { err, dialog: dialog.id },
      "could not record that an ended dialog's note was said: the next start looks for it before saying it",
    );
  });
}

/**
 * Marks dialog `id`'s note `sending` before its send. False when it is not to be sent now: the
 * header holds it no more (said already), or the store failed the mark (logged: the next start
 * says it).
 */
async function marked(o: NoteParts, id: string): Promise<boolean> {
  return o.dialogs.log.noteSending(id, true).catch((err: unknown) => {
    o.log.warn(
      { err, dialog: id },
      "could not mark an ended dialog's note as being sent: the next start says it",
    );
    return false;
  });
}

/**
 * Tell the person of dialog `head`, whose log the state store lost (`Dialogs.load`), to start
 * again, where its question waits (named, in a channel topic). Nothing of it is left to keep the
 * note until said: one send, its failure logged.
 */
export async function sayLost(o: NoteParts, head: DialogHead, signal: AbortSignal): Promise<void> {
  const { contexts, log } = o;
  log.warn(
    { dialog: head.id, where: head.where },
    "a dialog's log is gone from the state store (lost with its keys): its person is told to start again",
  );
  const [kind, id, ...rest] = head.conversation.split(":");
  const self = contexts.self?.userId ?? -1;
  let to: SendMessageParams;
  if (kind === "dm") {
    const ids = (id ?? "").split(",").map(Number);
    to = { type: "direct", to: ids.filter((n) => n !== self), content: head.lost ?? LOST_NOTE };
  } else {
    // The key keeps the topic lowercased: its case as shown is the end of `where` (`#channel > topic`).
    const lower = rest.join(":");
    const shown = head.where.slice(head.where.length - lower.length);
    const topic = shown.toLowerCase() === lower ? shown : lower;
    const content = `@**${head.userName}|${head.userId}** ${head.lost ?? LOST_NOTE}`;
    to = { type: "channel", to: Number(id), topic, content };
  }
  await contexts.client.messages.send(to, { signal }).catch((err: unknown) => {
    log.warn({ err, dialog: head.id }, "could not tell the person their dialog's log was lost");
  });
}
