/** Fields of a message event, read with care: a message event that failed its schema is read too. */
import { SERVER_CLOCK_SLACK_S } from "../effects/effect-records.ts";
import type { AnyEvent } from "../wire/events.ts";

/** A message object as it may come: any field may be missing or of another type. */
interface LooseMessage {
  readonly id?: unknown;
  readonly sender_id?: unknown;
  readonly timestamp?: unknown;
}

/** The message of a message event, if it has one (each field still to be checked). */
function messageOf(event: AnyEvent): LooseMessage | undefined {
  if (event.type !== "message") return undefined;
  const message: unknown = event.message;
  return typeof message === "object" && message !== null ? message : undefined;
}

/**
 * The id the delivery ledger tracks an event by: a message event's message id, if it has one.
 * Read with care: a message event that failed its schema is tracked too.
 */
export function ledgerIdOf(event: AnyEvent): number | undefined {
  const id = messageOf(event)?.id;
  return typeof id === "number" && Number.isSafeInteger(id) ? id : undefined;
}

/**
 * Message `id` if the server holds it: not the made-up first message (a negative id) of a dialog
 * started by `ctx.startDialog`, which nobody wrote and nothing can react to.
 */
export function onServer(id: number | undefined): number | undefined {
  return id !== undefined && id > 0 ? id : undefined;
}

/** A message event's `sender_id`, if it has one (read with the same care). */
export function senderIdOf(event: AnyEvent): unknown {
  return messageOf(event)?.sender_id;
}

/**
 * What a read-back of a send made for message event `event` (its message `id`) looks past:
 * messages newer than its message and stamped no earlier than it (`timestamp`, epoch seconds).
 * A dialog started by `ctx.startDialog` has a made-up first message (a negative id, no server
 * message to read after) stamped by this machine's clock, while the server stamps the sends by its
 * own, which may be behind: its bound starts SERVER_CLOCK_SLACK_S earlier.
 */
export function readBackOf(
  event: AnyEvent,
  id: number,
): { after: number | undefined; since: number | undefined } {
  const at = messageOf(event)?.timestamp;
  const stamped = typeof at === "number" ? at : undefined;
  if (id > 0) return { after: id, since: stamped };
  return { after: undefined, since: stamped === undefined ? undefined : stamped - SERVER_CLOCK_SLACK_S };
}

/**
 * The key message `id`'s effect records are kept under (runs.ts): after a dialog's `rewinds`
 * (`back`), its effects are numbered apart from the rewound ones.
 */
export function effectsKeyOf(id: number, rewinds: number | undefined): string {
  return rewinds ? `m:${id}~${rewinds}` : `m:${id}`;
}

/**
 * Where a dialog's replay makes its effects anew: from effect number `from` on (past the effects
 * its record carries), each is made after the dialog's latest answer or question, message `after`.
 * A send of those looked for after a lost answer is one past it: an earlier message with the same
 * words (the question a `back` asks again, a loop's same question) is not that send.
 */
export function freshEffectsOf(
  dialog: { answered?: readonly number[]; asked?: number | null },
  carried: readonly { n: number }[],
): { from: number; after: number } | undefined {
  const after = Math.max(dialog.asked ?? 0, ...(dialog.answered ?? []));
  if (after <= 0) return undefined;
  return { from: Math.max(0, ...carried.map((r) => r.n)) + 1, after };
}

/**
 * What a read-back of the effect being made (inside `effects.run.once`) looks past: messages newer
 * than `after` (a message id) and no older than `since` (epoch seconds). For an effect a dialog's
 * replay makes anew, its latest answer or question (see {@link freshEffectsOf}); else the event's.
 */
export function newerOf(effects: {
  run: { current: number };
  after: number | undefined;
  since?: number | undefined;
  fresh?: { from: number; after: number } | undefined;
}): { after: number | undefined; since?: number | undefined } {
  const fresh = effects.fresh;
  return fresh && effects.run.current >= fresh.from
    ? { after: fresh.after, since: effects.since }
    : { after: effects.after, since: effects.since };
}

/**
 * The fields that name an event's run on its log lines: its handler's `ctx.log` carries them, and
 * so does each attempt's timeout line, however the attempt was run (the queue's first, the failure
 * stage's later ones).
 */
export function runFields(event: AnyEvent): Record<string, unknown> {
  const { id: eventId, type: eventType } = event;
  const messageId = ledgerIdOf(event);
  return messageId ? { eventId, eventType, messageId } : { eventId, eventType };
}

/**
 * The fields that name a queue task's run on its timeout line: a run of an event (the pipeline's
 * tasks are given one, `Incoming`) is named by the event and, run by the queue, is its first
 * attempt; any other task by its conversation alone.
 */
export function taskFields(arg: unknown): Record<string, unknown> | undefined {
  const event = (arg as { event?: AnyEvent } | undefined)?.event;
  if (typeof event !== "object" || event === null || typeof event.type !== "string") return undefined;
  return { ...runFields(event), attempt: 1 };
}
