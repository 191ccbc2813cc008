/**
 * The effect records of a run of an event without a message id (`realm_user`, `update_message`,
 * `reaction`, `subscription`, a catch-up's `gap`...): under which key they are kept, and what a
 * read-back of a send whose answer was lost is bounded by.
 *
 * The key is the event's identity in the queue that delivered it: `q:<queue id>/<event id>`. The
 * server numbers a queue's events and never hands one out twice within it, and queue ids are unique
 * on the server: two different events never share a key, and every run of one event (the failure
 * stage's retries, a redelivery by the same queue) finds it. A content identity would not serve
 * every event type: a reaction added, removed and added again reads the same twice, and an edit's
 * `message_id` and `edit_timestamp` (whole seconds) may be another `update_message`'s of the same
 * message (a second edit within the second, a re-render: `rendering_only`).
 * Message keys are `m:`, cron jobs' `j:`, inbound webhooks' `w:`: none starts with `q:`, `r:`, `l:` or `x:`.
 *
 * A dead letter keeps the key and the time of the first attempt (`records`), so its replay, at any
 * later start, reads the same records and bounds its read-backs the same way.
 *
 * A reaction caught up (read on a waiting question: src/events/reaction-catch-up.ts, a question
 * kept after a crash) has no queue behind it, and nothing marks it handed on: each new queue's
 * catch-up hands it again while its question waits (its run, queued behind the conversation's
 * other events, not over yet). Its key is what the server keeps of it, `r:<message id>/<user
 * id>/<reaction type>/<emoji code>`, the same at every catch-up (a person holds one reaction of an
 * emoji on a message), and its first run reads the records, as a re-run does. Another event with
 * no queue behind it (a gap: each new queue makes its own) has a key of its own, made at its first
 * run and kept by its retries and its dead letter.
 */
import { randomUUID } from "node:crypto";
import {
  type EffectRecord,
  type EffectRecords,
  type EffectRun,
  SERVER_CLOCK_SLACK_S,
} from "../effects/effect-records.ts";
import type { DeadLetter } from "../state/dead-letters.ts";
import type { AnyEvent } from "../wire/events.ts";
import type { SendEffects } from "./context-types.ts";
import { effectsKeyOf, readBackOf } from "./event-fields.ts";
import type { Incoming } from "./incoming.ts";

/** A run's records and read-back bound: what a dead letter carries for its replay. */
export type RunRecords = NonNullable<DeadLetter["records"]>;

/**
 * The key and bound of `incoming`'s first run, begun at `nowMs` (the daemon's clock, epoch ms), or
 * for a saved event run again after a kill, no earlier than it was kept (`keptAt`): a send is looked
 * for among messages stamped no earlier than then, less the server's clock's slack.
 */
export function firstRecordsOf(incoming: Incoming, nowMs: number): RunRecords {
  const kept = incoming.letter?.records;
  if (kept !== undefined) return kept;
  const since = Math.floor((incoming.keptAt ?? nowMs) / 1000) - SERVER_CLOCK_SLACK_S;
  const { queue, letter } = incoming;
  const eventId = (incoming.event as { id?: unknown }).id;
  if (queue !== undefined && typeof eventId === "number") return { key: `q:${queue}/${eventId}`, since };
  // A letter kept without its key (an older version's): its own id; its first attempt's time unknown.
  if (letter !== undefined) return { key: `l:${letter.id}` };
  const caught = caughtUpKeyOf(incoming);
  return { key: caught ?? `x:${randomUUID()}`, since };
}

/** The key of a reaction caught up (no queue behind it), from what the server keeps of it. */
function caughtUpKeyOf({ event, queue }: Incoming): string | undefined {
  if (queue !== undefined || event.type !== "reaction") return undefined;
  const r = event as {
    message_id?: unknown;
    user_id?: unknown;
    reaction_type?: unknown;
    emoji_code?: unknown;
  };
  return `r:${r.message_id}/${r.user_id}/${r.reaction_type}/${r.emoji_code}`;
}

/**
 * The effect records of a run of `incoming`, an event without a message id: its first run
 * (`first`: when it began, epoch ms) or a run again, with the first run's key and bound.
 */
export function eventRecords(
  records: EffectRecords,
  incoming: Incoming,
  rerun: boolean,
  first: number | SendEffects,
): SendEffects {
  const { key, since } =
    typeof first === "number"
      ? firstRecordsOf(incoming, first)
      : { key: first.run.eventKey, since: first.since };
  const carried = (incoming.letter?.effects ?? []) as unknown as EffectRecord[];
  // A caught-up reaction's first run may be its second: another catch-up handed it too.
  const run = records.run(key, rerun || key.startsWith("r:"), carried);
  return since === undefined ? { run, after: undefined } : { run, after: undefined, since };
}

/** What the dead letter of an event without a message id keeps of its records (none for a message's). */
export function letterRecordsOf(effects: SendEffects | undefined, message: boolean): RunRecords | undefined {
  if (effects === undefined || message) return undefined;
  const { eventKey } = effects.run;
  return effects.since === undefined ? { key: eventKey } : { key: eventKey, since: effects.since };
}

/**
 * The effects of a run of message `id` outside a dialog: its records (and their key) are made at
 * its first effect, and its read-back bound when asked; most runs make no effect, and a burst
 * makes thousands of runs.
 */
export class MessageEffects implements SendEffects {
  readonly #records: EffectRecords;
  readonly #event: AnyEvent;
  readonly #id: number;
  readonly #rerun: boolean;
  readonly #carried: readonly EffectRecord[];
  /** Awaited before a dialog's question is sent (see `Incoming.beforeAsking`). */
  readonly #asking: (() => Promise<void>) | undefined;
  #run: EffectRun | undefined;

  constructor(
    records: EffectRecords,
    event: AnyEvent,
    id: number,
    rerun: boolean,
    carried: readonly EffectRecord[],
    asking?: () => Promise<void>,
  ) {
    this.#records = records;
    this.#event = event;
    this.#id = id;
    this.#rerun = rerun;
    this.#carried = carried;
    this.#asking = asking;
  }

  get run(): EffectRun {
    const asking = this.#asking;
    const before = asking && ((labelled: boolean) => (labelled ? asking() : undefined));
    this.#run ??= this.#records.run(
      effectsKeyOf(this.#id, undefined),
      this.#rerun,
      this.#carried,
      false,
      before,
    );
    return this.#run;
  }

  get after(): number | undefined {
    return readBackOf(this.#event, this.#id).after;
  }

  get since(): number | undefined {
    return readBackOf(this.#event, this.#id).since;
  }
}
