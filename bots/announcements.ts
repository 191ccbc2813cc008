/**
 * announcements: recurring messages, configured entirely in YAML. Each announcement is kept
 * booked on the server as a scheduled message (bot.recurring), so it goes out on time even while
 * bothost is down; the next occurrence is booked as soon as one is sent.
 *
 * Config:
 * ```yaml
 * bots:
 *   announcements:
 *     module: ./bots/announcements.ts
 *     email: announce-bot@chat.example.org
 *     api_key: ${ANNOUNCE_BOT_API_KEY}
 *     settings:
 *       announcements:
 *         - id: standup                 # 1-64 letters, digits, ".", "_", "-"; keep it stable
 *           cron: "0 9 * * 1-5"         # minute hour day-of-month month day-of-week
 *           timezone: Europe/Berlin     # IANA name; default UTC
 *           channel: team               # a channel name or id
 *           topic: standup
 *           content: "Standup in 5 minutes in the big room :coffee:"
 *         - id: weekly-rules
 *           cron: "0 10 * * MON"
 *           timezone: America/New_York
 *           channel: general
 *           topic: house rules
 *           snippet: House rules        # title of a saved snippet of the BOT's account
 * ```
 *
 * `content` or `snippet`, exactly one. A snippet is read (GET /saved_snippets) when its
 * occurrence is booked, that is right after the previous one went out: edit the snippet and the
 * next booking carries the new text. The bot's account must own the snippet (create it with
 * `client.savedSnippets.create` as the bot). Changing an announcement's cron, time zone, channel
 * or topic replaces its booking at the next start; removing it cancels its booking.
 * Check the times with `bothost schedule preview`, or ask the bot: `next` (in a direct message
 * or mentioning it) lists each announcement's next occurrences; `next standup` the next one of
 * one, `next 3 standup` its next three.
 */
import {
  BothostError,
  channelSetting,
  defineBot,
  nextOccurrences,
  parseTemplate,
  renderTemplate,
  snippetSetting,
  validateSchedule,
} from "bothost";
import { z } from "zod";

const Announcement = z
  .object({
    /** Stable name: the booking is tracked under it. */
    id: z
      .string()
      .regex(
        /^[A-Za-z0-9][\w.-]{0,63}$/,
        'use 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit',
      ),
    cron: z.string().min(1),
    timezone: z.string().min(1).default("UTC"),
    channel: channelSetting(),
    /** A text, or a template of the occurrence: {{date}}, {{weekday}}, {{time}} (checked below). */
    topic: z.string(),
    content: z
      .string()
      .refine((s) => s.trim() !== "", "must not be empty")
      .optional(),
    /** Looked up by `bothost check` and at each start, as the bot cannot book without it. */
    snippet: snippetSetting().optional(),
  })
  // Each check runs when the fields it reads passed theirs, so that one mistake (content: 5)
  // hides no other (a bad cron in the same entry): each is reported at its line.
  .superRefine(
    (a, ctx) => {
      if ((a.content === undefined) === (a.snippet === undefined)) {
        ctx.addIssue({
          code: "custom",
          path: a.content === undefined ? [] : ["snippet"],
          message: "give either content (the message) or snippet (a saved snippet's title), not both",
        });
      }
    },
    { when: fieldsPassed("content", "snippet") },
  )
  .superRefine(
    (a, ctx) => {
      for (const message of topicProblems(a.topic))
        ctx.addIssue({ code: "custom", path: ["topic"], message });
    },
    { when: fieldsPassed("topic") },
  )
  .superRefine(
    (a, ctx) => {
      // Each checked apart: a wrong time zone hides no mistake of the cron, nor the other way.
      const checks = [
        ["cron", { cron: a.cron, timezone: "UTC" }],
        ["timezone", { cron: "@daily", timezone: a.timezone }],
      ] as const;
      for (const [field, spec] of checks) {
        try {
          validateSchedule(spec);
        } catch (err) {
          ctx.addIssue({ code: "custom", path: [field], message: (err as Error).message });
        }
      }
    },
    { when: fieldsPassed("cron", "timezone") },
  );

/** A check's `when`: none of `fields` has an issue of its own (the entry as a whole may). */
function fieldsPassed(...fields: string[]) {
  return (payload: { value: unknown; issues: readonly { path?: readonly PropertyKey[] }[] }) =>
    typeof payload.value === "object" &&
    payload.value !== null &&
    !payload.issues.some((issue) => fields.includes(String(issue.path?.[0])));
}

export default defineBot({
  settings: z.object({
    announcements: z
      .array(Announcement)
      .min(1)
      .superRefine((list, ctx) => {
        const seen = new Set<string>();
        list.forEach((a, i) => {
          if (seen.has(a.id))
            ctx.addIssue({ code: "custom", path: [i, "id"], message: `the id "${a.id}" is used twice` });
          seen.add(a.id);
        });
      }),
  }),
  setup(bot, settings) {
    bot.command(
      "next",
      {
        description: "when each announcement goes out next",
        // A first word that is no number is the id (`next standup`): taken as a string and read here,
        // as a number schema would refuse it before the handler runs.
        args: {
          count: z
            .string()
            .optional()
            .describe("how many occurrences, 1-10 (default 1); a word that is no number is the id"),
          id: z.string().optional().describe("one announcement's id"),
        },
        examples: ["next", "next standup", "next 3 standup"],
      },
      (ctx) => {
        const read = countAndId(ctx.args.count, ctx.args.id);
        if (typeof read === "string") return ctx.reply(read);
        const { count, id } = read;
        const chosen = settings.announcements.filter((a) => id === undefined || a.id === id);
        if (chosen.length === 0) {
          const ids = settings.announcements.map((a) => `\`${a.id}\``).join(", ");
          return ctx.reply(`There is no announcement \`${id}\`; there are ${ids}.`);
        }
        const lines = chosen.map((a) => {
          const next = nextOccurrences(a, new Date(ctx.now()), count);
          if (next.length === 0) return `* \`${a.id}\` → #**${a.channel}>${a.topic}**: never again`;
          // A dated topic ("standup {{date}}") is each occurrence's own: named with it.
          if (!a.topic.includes("{{"))
            return `* \`${a.id}\` → #**${a.channel}>${a.topic}**: ${next.map((d) => at(d, a.timezone)).join("; ")}`;
          const each = next.map(
            (d) => `#**${a.channel}>${topicAt(a.topic, d, a.timezone)}** ${at(d, a.timezone)}`,
          );
          return `* \`${a.id}\` → ${each.join("; ")}`;
        });
        return ctx.reply(lines.join("\n"));
      },
    );
    for (const a of settings.announcements) {
      const title = a.snippet;
      bot.recurring(a.id, {
        cron: a.cron,
        timezone: a.timezone,
        to: a.channel,
        topic: a.topic,
        content:
          title === undefined
            ? (a.content as string)
            : async (_at, { signal }) => {
                // Ended with the booking when it takes longer than handler_timeout, or the bot stops.
                const { saved_snippets } = await bot.api.savedSnippets.list({ signal });
                const snippet = saved_snippets.find((s) => s.title === title);
                if (!snippet) {
                  throw new BothostError(
                    "SNIPPET_NOT_FOUND",
                    `announcement "${a.id}": the bot has no saved snippet titled "${title}"; create it as the bot's account or fix the title.`,
                  );
                }
                return snippet.content;
              },
      });
    }
  },
});

const NEXT_USAGE = "Usage: `next [count] [id]` or `next [id]`, e.g. `next 3 standup`, `next standup`.";

/**
 * `next`'s words as a count and an id: `next 3 standup`, `next standup`, `next 3`; what is wrong
 * in words when the count is no whole number from 1 to 10 or two ids are given.
 */
function countAndId(
  first: string | undefined,
  second: string | undefined,
): { count: number; id?: string } | string {
  if (first === undefined) return { count: 1 };
  if (!/^[+-]?\d+(\.\d*)?$/.test(first)) {
    if (second !== undefined)
      return `\`next\`: give one announcement's id, after the count if any; got "${first}" and "${second}".\n${NEXT_USAGE}`;
    return { count: 1, id: first };
  }
  const count = Number(first);
  if (!Number.isInteger(count) || count < 1 || count > 10)
    return `\`next\`: <count> must be a whole number from 1 to 10, got "${first}".\n${NEXT_USAGE}`;
  return second === undefined ? { count } : { count, id: second };
}

/** The placeholders a topic may use (bot.recurring's), each at its longest. */
const TOPIC_PLACEHOLDERS = ["date", "weekday", "time"];
const LONGEST = { date: "2026-12-31", weekday: "Wednesday", time: "23:59" };

/**
 * What is wrong with a topic template, checked here so that the problem is reported at its config
 * line (bot.recurring checks it too, but only at setup, naming no line): an unknown placeholder,
 * `{date}` for `{{date}}`, or a topic that renders longer than 60 characters.
 */
function topicProblems(topic: string): string[] {
  const { problems, legacy } = parseTemplate(topic, TOPIC_PLACEHOLDERS);
  // A single-brace word is plain text unless it names a placeholder (`{date}`: a misspelling).
  const meant = problems.filter((_p, i) => i >= legacy.length || TOPIC_PLACEHOLDERS.includes(legacy[i]!));
  if (meant.length > 0) return meant;
  const longest = [...renderTemplate(topic, LONGEST).trim()].length;
  const is = topic.includes("{{") ? "renders up to" : "is";
  return longest > 60 ? [`${is} ${longest} characters; topics are at most 60`] : [];
}

/** The parts of `date` in `timeZone`, by the runtime's own names (`en-GB`, 24 hours). */
function partsOf(date: Date, timeZone: string, weekday: "short" | "long", month: "short" | "2-digit") {
  const parts = new Intl.DateTimeFormat("en-GB", {
    timeZone,
    weekday,
    day: "2-digit",
    month,
    year: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  }).formatToParts(date);
  return (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? "";
}

/**
 * "Mon, 30 Nov 2026, 09:00 Europe/Berlin", laid out here from its parts rather than by the
 * runtime's locale data, so every Node.js version writes the same line.
 */
function at(date: Date, timeZone: string): string {
  const part = partsOf(date, timeZone, "short", "short");
  const day = String(Number(part("day")));
  return `${part("weekday")}, ${day} ${part("month")} ${part("year")}, ${part("hour")}:${part("minute")} ${timeZone}`;
}

/** A topic template as the occurrence at `date` renders it (bot.recurring's placeholders). */
function topicAt(topic: string, date: Date, timeZone: string): string {
  const part = partsOf(date, timeZone, "long", "2-digit");
  const local = {
    date: `${part("year")}-${part("month")}-${part("day")}`,
    weekday: part("weekday"),
    time: `${part("hour")}:${part("minute")}`,
  };
  return renderTemplate(topic, local);
}
