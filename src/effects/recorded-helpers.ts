/**
 * The calls of `ctx.schedule` and `ctx.snippets` that change the server, as recorded effects:
 * made once per event (or cron occurrence), and a run again (a retry, a dialog's replay) is handed
 * what the first run got. Were they made again, a cancel would meet a 404 and an `ensure` say
 * "unchanged" of the snippet it created, turning the handler down another path.
 *
 * The one in flight when a run failed is looked for before it is made again: a booking to the
 * same recipient with the same content (and topic) at about the same time, or a snippet with the
 * same title and content created since the event, neither one an earlier effect of the run (or
 * of a dialog's rewound turn) holds; a booking cancelled is one no longer listed, one moved is
 * listed at its new time (or a little earlier: the first run's `ctx.now()` was), a snippet
 * updated or ensured is listed with its new words, one deleted is not listed. Reads (`list`,
 * `get`) are not effects.
 */
import { realClock } from "../time/clock.ts";
import { printOf } from "./effect-claims.ts";
import { type EffectRecord, type EffectRun, SERVER_CLOCK_SLACK_S } from "./effect-records.ts";
import { failpoint } from "./failpoints.ts";
import { findDelivered } from "./schedule/find-delivered.ts";
import { EMPTY_TOPIC_NAME, normalizeContent, storedTopic, toSeconds } from "./schedule/normalize.ts";
import { keptClientLookups } from "./schedule/recipient-ids.ts";
import { listedFor, resolveRecipient } from "./schedule/resolve-recipient.ts";
import {
  bookingId,
  createScheduleApi,
  type ScheduleApi,
  type ScheduleApiOptions,
  type ScheduleResult,
} from "./schedule/schedule-api.ts";
import {
  type EnsureResult,
  type SavedSnippet,
  type SnippetCache,
  type Snippets,
  snippetField,
} from "./snippets/snippet-cache.ts";

/**
 * How far apart the times of two bookings with the same content may be and still be one: a
 * handler that books "in an hour" asks for a later time when it runs again minutes later.
 */
const SAME_BOOKING_S = 15 * 60;

/**
 * How long after its time the server may send a booking: its checks come each whole minute, and
 * it gives up on one more than 10 minutes late.
 */
const SENT_BY_S = 11 * 60;

/**
 * A run's effect records as the read-backs see them: `since`, epoch seconds of the event;
 * `rewound`, a dialog's rewound effects (made, though no longer the run's).
 */
export interface RecordedEffects {
  run: EffectRun;
  since?: number | undefined;
  rewound?: readonly EffectRecord[] | undefined;
}

/**
 * The schedule API over `options` with its bookings recorded in `effects` (when the run has
 * records); `self`: the bot's user id (the server lists a direct message's users without it).
 */
export function recordedSchedule(
  options: ScheduleApiOptions,
  effects: RecordedEffects | undefined,
  self: number,
): ScheduleApi {
  const schedule = createScheduleApi(options);
  if (effects === undefined) return schedule;
  const run = effects.run;
  const lookups = options.lookups ?? keptClientLookups(options.client, options.clock ?? realClock);
  return {
    ...schedule,
    at: (params) =>
      run.once<Record<string, number>>("schedule", {
        act: async () => {
          const booked = await schedule.at(params);
          failpoint("schedule-booked");
          return booked;
        },
        verify: async (): Promise<Record<string, number> | undefined> => {
          const at = toSeconds(params.at instanceof Date ? params.at.getTime() : params.at);
          const content = normalizeContent(params.content);
          // As the server stores the topic and lists it (GET /scheduled_messages never maps "" to
          // the empty topic's display name): see storedTopic.
          const server = options.limits?.();
          const stored = (t: string | undefined) =>
            storedTopic(t, server?.emptyTopicName ?? EMPTY_TOPIC_NAME, server?.featureLevel);
          const topic = params.topic === undefined ? undefined : stored(params.topic);
          const target = await resolveRecipient(lookups, params.to, "schedule.at", options.signal);
          const taken = takenBy(effects, "schedule", "scheduledMessageId");
          const near = (await schedule.list())
            .filter(
              (b) =>
                !taken.has(b.scheduledMessageId) &&
                listedFor(target, self, b) &&
                b.content === content &&
                (topic === undefined || stored(b.topic) === topic) &&
                Math.abs(toSeconds(b.at.getTime()) - at) <= SAME_BOOKING_S,
            )
            .sort((a, b) => Math.abs(a.at.getTime() / 1000 - at) - Math.abs(b.at.getTime() / 1000 - at));
          if (near[0]) return { scheduledMessageId: near[0].scheduledMessageId };
          // Not listed: sent already, if its time may have come. A time reckoned from ctx.now() is
          // later on a run again: the first run's was earlier by at most the time since the event.
          const now = toSeconds((options.clock ?? realClock).now());
          const since = effects.since;
          const earliest = Math.max(
            at - SAME_BOOKING_S,
            since === undefined ? -Infinity : at - Math.max(0, now - since) - SERVER_CLOCK_SLACK_S,
          );
          if (earliest > now + SERVER_CLOCK_SLACK_S) return undefined;
          const found = await findDelivered(
            options.client,
            self,
            {
              target,
              topic: topic ?? "",
              content,
              window: { from: earliest, to: at + SAME_BOOKING_S + SENT_BY_S + SERVER_CLOCK_SLACK_S },
              taken: takenBy(effects, "schedule", "sentMessageId"),
            },
            options.signal,
          );
          if (found.sentMessageId !== undefined) return { sentMessageId: found.sentMessageId };
          // Booked again: a duplicate the people see beats a message lost without a trace.
          if (found.undecided) {
            options.log?.warn(
              { at: new Date(at * 1000).toISOString(), to: target.to },
              "schedule.at: the bot said more in the conversation since the booking's time than is read back; booking it again",
            );
          }
          return undefined;
        },
      }) as unknown as Promise<ScheduleResult>,
    cancel: async (booking) => {
      // Checked before the effect is begun: a booking found sent has nothing to cancel.
      const id = idOf(booking, "schedule.cancel");
      await run.once(
        "schedule:cancel",
        {
          act: () => schedule.cancel(id).then(() => null),
          // An id the server never lists (not a positive integer) is refused by the act again.
          verify: async () => (validId(id) && !(await listed(schedule, id)) ? null : undefined),
        },
        printOf([id]),
      );
    },
    reschedule: async (booking, at) => {
      const id = idOf(booking, "schedule.reschedule");
      await run.once(
        "schedule:move",
        {
          act: () => schedule.reschedule(id, at).then(() => null),
          verify: async () => {
            const when = toSeconds(at instanceof Date ? at.getTime() : at);
            const found = validId(id) ? await listed(schedule, id) : undefined;
            if (!found) return undefined;
            // A time reckoned from ctx.now() is later on a run again: the first run's was earlier
            // by at most the time since the event (a fixed time is the same on every run).
            const now = toSeconds((options.clock ?? realClock).now());
            const since = effects.since;
            const earliest =
              since === undefined ? when : when - Math.max(0, now - since) - SERVER_CLOCK_SLACK_S;
            const t = toSeconds(found.at.getTime());
            return t <= when && t >= earliest ? null : undefined;
          },
        },
        printOf([id, at instanceof Date ? at.getTime() : at]),
      );
    },
  };
}

/**
 * The id a booking names, for the records: a result found sent throws at once (no effect begun);
 * anything else not an id is handed on as given, for the call to refuse as a first run did.
 */
const idOf = (booking: number | ScheduleResult, where: string): number =>
  typeof booking === "object" && booking !== null ? bookingId(booking, where) : booking;

const validId = (id: unknown) => typeof id === "number" && Number.isInteger(id) && id > 0;

const listed = async (schedule: ScheduleApi, id: number) =>
  (await schedule.list()).find((b) => b.scheduledMessageId === id);

/** `snippets` with its changes recorded in `effects`; `byId`: the cache a delete aimed at an id goes through. */
export function recordedSnippets(
  snippets: Snippets,
  effects: RecordedEffects,
  byId?: Pick<SnippetCache, "deleteId">,
): Snippets {
  const { run, since } = effects;
  /** The snippet `title` names now (the oldest of that title), if `title` is one a snippet can have. */
  const named = async (title: unknown) =>
    typeof title === "string" && title.trim() !== ""
      ? (await snippets.list()).find((s) => s.title === title.trim())
      : undefined;
  const words = (text: unknown) => (typeof text === "string" ? text.trim() : undefined);
  return {
    list: () => snippets.list(),
    get: (title) => snippets.get(title),
    update: async (title, changes) => {
      const aim = snippetField("title", title); // checked before the lookup, as the helper checks it
      return (await run.once(
        "snippet:update",
        {
          target: async () => (await named(aim))?.id ?? null,
          act: async () => saved(plain(await snippets.update(title, changes))),
          verify: async (pending) => {
            // The snippet it aimed at, while listed (one of the same title is another snippet); not
            // listed, the one titled as asked (a server before feature level 368 replaces it: a new id).
            const aimed = (await snippets.list()).find((s) => s.id === pending.target);
            const found = aimed ?? (await named(changes.title ?? title));
            const content = changes.content === undefined ? undefined : words(changes.content);
            return found &&
              found.title === words(changes.title ?? title) &&
              (content === undefined || found.content === content)
              ? plain(found)
              : undefined;
          },
        },
        printOf([title, changes.title ?? null, changes.content ?? null]),
      )) as SavedSnippet;
    },
    delete: async (title) => {
      const aim = snippetField("title", title);
      return run.once(
        "snippet:delete",
        {
          // The snippet the title names when the delete is claimed (null: none, nothing to delete):
          // a run again after its answer was lost deletes that one or nothing, never a twin.
          target: async () => (await named(aim))?.id ?? null,
          act: async (target) =>
            saved(
              typeof target !== "number"
                ? false
                : await (byId ? byId.deleteId(target) : snippets.delete(title)),
            ),
          verify: async (pending) => {
            if (pending.target === null) return false;
            if (typeof pending.target === "number")
              return (await snippets.list()).some((s) => s.id === pending.target) ? undefined : true;
            // A claim that kept no target: none of that title left is taken as deleted.
            return (await named(aim)) ? undefined : true;
          },
        },
        printOf([title]),
      );
    },
    ensure: async (title, content) =>
      (await run.once(
        "snippet:ensure",
        {
          act: async () => {
            const { snippet, action } = await snippets.ensure(title, content);
            return saved({ snippet: plain(snippet), action });
          },
          verify: async () => {
            // Made, its answer lost: created by it if created since the event (and no earlier
            // effect's); an update cannot be told from a snippet that had those words already.
            const found = await named(title);
            if (!found || found.content !== words(content)) return undefined;
            const created =
              since !== undefined &&
              found.date_created >= since &&
              !takenBy(effects, "snippet", "id").has(found.id);
            return { snippet: plain(found), action: created ? "created" : "unchanged" };
          },
        },
        printOf([title, content]),
      )) as unknown as EnsureResult,
    create: (title, content) =>
      run.once("snippet", {
        act: async () => saved(plain(await snippets.create(title, content))),
        verify: async () => {
          const taken = takenBy(effects, "snippet", "id");
          const found = (await snippets.list()).find(
            (s) =>
              !taken.has(s.id) &&
              s.title === title.trim() &&
              s.content === content.trim() &&
              (since === undefined || s.date_created >= since),
          );
          return found && plain(found);
        },
      }),
  };
}

/**
 * What the earlier effects of `kind` this run made or replayed, and a dialog's rewound ones, hold
 * (their results' `field`): a read-back after a lost answer never takes one of those for the
 * effect it looks for (a dialog that books the same reminder at each turn, or again after a
 * `back`; a handler that saves the same snippet twice).
 */
function takenBy(effects: RecordedEffects, kind: string, field: string): Set<unknown> {
  const results = [...effects.run.made, ...(effects.rewound ?? [])]
    .filter((r) => r.kind === kind && !r.pending)
    .map((r) => r.result);
  return new Set(
    results.map((r) => (r !== null && typeof r === "object" ? (r as Record<string, unknown>)[field] : r)),
  );
}

/** `result`, a snippet change's answer, handed on once the test's crash point for it passed. */
function saved<T>(result: T): T {
  failpoint("snippet-saved");
  return result;
}

/** The fields a recorded snippet keeps (the server may add more; they are not needed again). */
function plain(s: SavedSnippet): { id: number; title: string; content: string; date_created: number } {
  return { id: s.id, title: s.title, content: s.content, date_created: s.date_created };
}
