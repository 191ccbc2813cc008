/**
 * `ctx.schedule.at` and `ctx.snippets.create` as recorded effects, made once per event (or cron
 * occurrence). The one in flight when a run failed is looked for before it is made again: a
 * booking to the same recipient with the same content (and topic) at about the same time, or a
 * snippet with the same title and content created since the event, neither one an earlier effect
 * of the run (or of a dialog's rewound turn) holds. The other calls set a state and are safe to
 * repeat.
 */
import type { EffectRecord, EffectRun } from "./effect-records.ts";
import { normalizeContent, normalizeTopic, toSeconds } from "./schedule/normalize.ts";
import { clientLookups, listedFor, resolveRecipient } from "./schedule/resolve-recipient.ts";
import { createScheduleApi, type ScheduleApi, type ScheduleApiOptions } from "./schedule/schedule-api.ts";
import type { SavedSnippet, Snippets } from "./snippets/snippet-cache.ts";

/**
 * How far apart the times of two bookings with the same content may be and still be one: a
 * handler that books "in an hour" asks for a later time when it runs again minutes later.
 */
const SAME_BOOKING_S = 15 * 60;

/** The empty topic's display name when the server's is not known yet (its default). */
const EMPTY_TOPIC_NAME = "general chat";

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
  const lookups = options.lookups ?? clientLookups(options.client);
  return {
    ...schedule,
    at: (params) =>
      run.once("schedule", {
        act: () => schedule.at(params),
        verify: async () => {
          const at = toSeconds(params.at instanceof Date ? params.at.getTime() : params.at);
          const content = normalizeContent(params.content);
          // As the server stores the topic and lists it: stripped, "(no topic)" and the realm's
          // empty-topic display name as "" (GET /scheduled_messages never maps "" to that name).
          const emptyTopicName = options.limits?.()?.emptyTopicName ?? EMPTY_TOPIC_NAME;
          const topic = params.topic === undefined ? undefined : normalizeTopic(params.topic, emptyTopicName);
          const target = await resolveRecipient(lookups, params.to, "schedule.at", options.signal);
          const taken = takenBy(effects, "schedule", "scheduledMessageId");
          const near = (await schedule.list())
            .filter(
              (b) =>
                !taken.has(b.scheduledMessageId) &&
                listedFor(target, self, b) &&
                b.content === content &&
                (topic === undefined || normalizeTopic(b.topic, emptyTopicName) === topic) &&
                Math.abs(toSeconds(b.at.getTime()) - at) <= SAME_BOOKING_S,
            )
            .sort((a, b) => Math.abs(a.at.getTime() / 1000 - at) - Math.abs(b.at.getTime() / 1000 - at));
          return near[0] && { scheduledMessageId: near[0].scheduledMessageId };
        },
      }),
  };
}

/** `snippets` with its creations recorded in `effects`. */
export function recordedSnippets(snippets: Snippets, effects: RecordedEffects): Snippets {
  const { run, since } = effects;
  return {
    list: () => snippets.list(),
    get: (title) => snippets.get(title),
    update: (title, changes) => snippets.update(title, changes),
    delete: (title) => snippets.delete(title),
    ensure: (title, content) => snippets.ensure(title, content),
    create: (title, content) =>
      run.once("snippet", {
        act: async () => plain(await snippets.create(title, content)),
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

/** The fields a recorded snippet keeps (the server may add more; they are not needed again). */
function plain(s: SavedSnippet): { id: number; title: string; content: string; date_created: number } {
  return { id: s.id, title: s.title, content: s.content, date_created: s.date_created };
}
