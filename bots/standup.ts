/**
 * standup: on weekdays at a set time, asks each member of a user group three questions in a direct
 * message, one after the other, and posts each person's answers to a channel topic of the day
 * (`standup 2026-11-30`). Anyone can say `standup` to answer at another time (once a day), in
 * a channel too: the questions are then asked in their direct messages;
 * answering `skip`, or saying `standup skip [reason]`, skips the day (once a day); moderators get
 * `standup report`: who answered, who skipped, who has not yet.
 *
 * The questions are a durable dialog (`ctx.prompt`): a restart, a crash or a deploy in the middle
 * of someone's answers goes on at the question they were at, each answer under its question.
 * Down at the set time, the daemon asks at its start, the same day only; a set-time run cut short
 * by a crash goes on at the next start the same day only too (nobody is asked an earlier day's
 * questions). A wait of an earlier day's questions that passed meanwhile is told as that day's;
 * answers or a skip given after midnight to a set begun the day before are that day's too.
 *
 * Config:
 * ```yaml
 * bots:
 *   standup:
 *     module: ./bots/standup.ts
 *     email: standup-bot@chat.example.org
 *     api_key: ${STANDUP_BOT_API_KEY}
 *     settings:
 *       group: engineering             # the user group whose members are asked
 *       channel: standups              # where the answers go, one topic a day
 *       cron: "30 9 * * 1-5"           # default: weekdays at 09:30
 *       timezone: Europe/Berlin        # default UTC
 *       wait: 4h                       # how long each question waits; default 4h; the three
 *                                      # waits together must end before the next run
 * ```
 * The bot must be subscribed to `channel`.
 */
import {
  type BotContext,
  channelSetting,
  defineBot,
  groupSetting,
  nextOccurrences,
  PromptError,
  type Sender,
  validateSchedule,
} from "bothost";
import { z } from "zod";

export const QUESTIONS = ["What did you do yesterday?", "What will you do today?", "Anything blocking you?"];
const KEEP = { ttlMs: 8 * 86_400_000 };
const DONE = "You are done for today.";
export const UNDER_WAY = "Your standup questions are already under way here: answer the question above.";
export const SENT = "I've sent you today's questions in a direct message.";
export const WAITING = "Your questions are waiting in our direct messages.";
/** Said when the wait of an earlier day's questions passed (the daemon was down over midnight, say). */
export const expired = (day: string) =>
  `Your standup questions of ${day} had no answer: no standup from you that day.`;

/** `standup skip [reason]` (any case), said as an answer while the questions wait: the day is skipped. */
const SKIP_SAID = /^standup\s+skip(?:\s+([\s\S]*\S))?\s*$/i;

const DURATION = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/;
const UNIT_MS: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };

/** Milliseconds of a duration that matches DURATION. */
function ms(duration: string): number {
  let total = 0;
  for (const [, amount, unit] of duration.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g))
    total += Number(amount) * UNIT_MS[unit!]!;
  return total;
}

/** A duration as the config writes them, to the second below: `1d3h`, `7h40m`. */
function show(value: number): string {
  let out = "";
  let left = Math.floor(value / 1_000) * 1_000;
  for (const unit of ["d", "h", "m", "s"]) {
    const n = Math.floor(left / UNIT_MS[unit]!);
    if (n > 0) out += `${n}${unit}`;
    left -= n * UNIT_MS[unit]!;
  }
  return out || "0s";
}

/**
 * Why `wait` is too long for the schedule, or undefined: a person's questions (each waiting up to
 * `wait`) must end before the next run asks again, else that run finds them still waiting, skips
 * the person, and their answers go on with the earlier day's questions. The shortest time between
 * two runs is taken over a year of them in the time zone (DST changes included), or their first
 * 3,000 for a schedule that runs more often, from a fixed date so that the answer does not depend
 * on the day the config is loaded.
 */
function waitProblem(s: { cron: string; timezone: string; wait: string }): string | undefined {
  if (!DURATION.test(s.wait)) return undefined; // reported by the field's own check
  const longest = QUESTIONS.length * ms(s.wait);
  const spec = { cron: s.cron, timezone: s.timezone };
  const start = Date.UTC(2026, 0, 1);
  let from = new Date(start);
  let previous: number | undefined;
  let gap = Number.POSITIVE_INFINITY;
  // In batches, so that the walk stops at the first gap too short.
  for (
    let seen = 0;
    seen < 3_000 && from.getTime() < start + 366 * 86_400_000 && gap > longest;
    seen += 500
  ) {
    const runs = nextOccurrences(spec, from, 500);
    for (const run of runs) {
      if (previous !== undefined) gap = Math.min(gap, run.getTime() - previous);
      previous = run.getTime();
    }
    if (runs.length === 0) break;
    from = runs[runs.length - 1]!;
  }
  if (gap > longest) return undefined;
  return (
    `each of the ${QUESTIONS.length} questions waits up to ${s.wait}, so a person's questions can take ` +
    `${show(longest)}, but cron "${s.cron}" (${s.timezone}) can run again after ${show(gap)}: ` +
    `set wait under ${show(gap / QUESTIONS.length)}`
  );
}

export default defineBot({
  settings: z
    .object({
      group: groupSetting(z.string().min(1)),
      channel: channelSetting(z.string().min(1)),
      cron: z.string().default("30 9 * * 1-5"),
      timezone: z.string().default("UTC"),
      /** A duration as the config writes them: `4h`, `90m`, `1h30m`. */
      wait: z.string().regex(DURATION, 'must be a duration such as "4h", "90m" or "1h30m"').default("4h"),
    })
    // Checked here, not first by bot.cron in setup, so a mistake is reported at its config line.
    .superRefine((s, ctx) => {
      // Each checked apart: a wrong time zone hides no mistake of the cron, nor the other way.
      let valid = true;
      for (const field of ["cron", "timezone"] as const) {
        try {
          validateSchedule(
            field === "cron" ? { cron: s.cron, timezone: "UTC" } : { cron: "@daily", timezone: s.timezone },
          );
        } catch (err) {
          ctx.addIssue({ code: "custom", path: [field], message: (err as Error).message });
          valid = false;
        }
      }
      if (!valid) return;
      const tooLong = waitProblem(s);
      if (tooLong) ctx.addIssue({ code: "custom", path: ["wait"], message: tooLong });
    }),
  setup(bot, s) {
    bot.track("groups");
    const day = (at: number) => new Date(at).toLocaleDateString("en-CA", { timeZone: s.timezone });
    const today = (ctx: { now(): number }) => day(ctx.now());
    // Records the outcome of the day `on` (default today) for the person, and posts it to that day's topic.
    const close = async (
      ctx: BotContext & { sender: Sender },
      outcome: string,
      content: string,
      on = today(ctx),
    ) => {
      await ctx.state.set(`${on}:${ctx.sender.id}`, outcome, KEEP);
      await ctx.send({ type: "channel", to: s.channel, topic: `standup ${on}`, content });
    };

    // Whether the person has an outcome today (or on the day `on`), as read when their dialog first
    // reached `at`: kept in its log (ctx.external), so that its replays take the path it took,
    // whatever their other conversations recorded since (else a replay would stop where the first
    // run asked).
    const doneAt = (ctx: BotContext & { sender: Sender }, at: string, on = today(ctx)) => {
      // The key is made outside `fn`: its `ctx.now()` is then a value of the log at every run.
      const key = `${on}:${ctx.sender.id}`;
      return ctx.external(`done at ${at}`, async () => Boolean(await ctx.state.get(key)));
    };

    // An occurrence missed while the daemon was down (a deploy or a crash across the set time) is
    // run once at its start, the same day only: a day missed altogether is not asked the next.
    // The same for a run cut short (the daemon killed after asking some of the group), taken up
    // again at the next start with its `ctx.job` as before (`catchUp` false): on a later day it
    // ends without asking the rest; those it asked have their own waits, which tell them when
    // they pass. The fixed id keeps the job's last run when `cron` or `timezone` changes, so that
    // a start past the new set time still asks that day.
    bot.cron(s.cron, { timezone: s.timezone, missed: "run-once", id: "standup" }, async (ctx) => {
      if (day(ctx.job.scheduledFor.getTime()) !== today(ctx)) return;
      const members = ctx.groups.members(s.group);
      // Renamed or deactivated since the start's check: said at each occurrence, not skipped in silence.
      if (members === undefined)
        ctx.log.warn({ group: s.group }, "no user group of that name: nobody was asked today (check group)");
      for (const id of members ?? []) {
        if (!(await ctx.state.get(`${today(ctx)}:${id}`))) await ctx.startDialog(id, "standup");
      }
    });

    bot.command("standup", { description: "answer today's standup questions" }, async (ctx) => {
      // Said anywhere but their direct messages: asked there (answers stay private until posted),
      // and never a second set while one waits there (startDialog then resolves false).
      if (ctx.addressed !== "direct") {
        if (await ctx.state.get(`${today(ctx)}:${ctx.sender.id}`)) return ctx.reply(DONE);
        return ctx.reply((await ctx.startDialog(ctx.sender.id, "standup")) ? SENT : WAITING);
      }
      // Before each question, and before the answers are posted: the set's day done already (in
      // another conversation of theirs, say), nothing more is asked or posted.
      const done = async (at: string, on?: string) =>
        (await doneAt(ctx, at, on)) && Boolean(await ctx.reply(DONE));
      // The day the set began, on the daemon's clock: for one the bot began (`ctx.startDialog`, a
      // made-up first message with no server id), its message's stamp, kept before its first run
      // (a crash then runs it at the next start, maybe a later day); for one their message began,
      // the day its start check read (its first `ctx.now()`, kept with its first question, so that
      // dialogs under way replay alike), not the server's stamp: `standup` sent at 23:50 while the
      // daemon was down is checked and asked the next day, and a server clock ahead or behind moves
      // a stamp over midnight.
      const started = ctx.event.message.id < 0;
      const began = started ? day(ctx.event.message.timestamp * 1_000) : today(ctx);
      if (await done("start", started ? undefined : began)) return;
      const answers: string[] = [];
      // Skips the set's day (after midnight, the day it began), as the cancel word or the command does.
      const skip = (reason = "") => {
        const on = began === today(ctx) ? "today" : began;
        return close(ctx, "skipped", `**${ctx.sender.name}** skips ${on}${reason}.`, began);
      };
      try {
        for (const [i, q] of QUESTIONS.entries()) {
          if (i > 0 && (await done(`question ${i + 1}`, began))) return;
          const cancel = { word: "skip", reply: "Skipped for today." };
          // `standup report` runs as the command while the question waits (a moderator's own questions).
          const commands = ["help", "standup report"];
          const asking = { timeout: s.wait, cancel, commands };
          let { text } = await ctx.prompt(q, asking);
          // `standup` said here while a question waits asks for the questions under way: this one again.
          while (/^standup$/i.test(text.trim())) ({ text } = await ctx.prompt(q, asking));
          // `standup skip [reason]` said here while a question waits is the command, not an answer.
          const skipSaid = SKIP_SAID.exec(text.trim());
          if (skipSaid) {
            if (await done("end", began)) return;
            await skip(skipSaid[1] ? `: ${skipSaid[1]}` : "");
            return ctx.reply("Skipped for today.");
          }
          answers.push(`* ${q} ${text}`);
        }
      } catch (err) {
        if (!(err instanceof PromptError)) throw err;
        // The set time's questions began for them while this message was on its way: asked once.
        if (err.code === "PROMPT_PENDING") return ctx.reply(UNDER_WAY);
        // The set's day done meanwhile in another conversation: nothing left to skip or to miss.
        if (await doneAt(ctx, "end", began)) return;
        // Skipped after midnight: the set's day is skipped, not the new one (asked at its set time).
        if (err.code === "PROMPT_CANCELLED") return skip();
        // An earlier day's set whose wait passed while the daemon was down (or after midnight):
        // about that day, and nothing when they answered or skipped it in another conversation.
        if (began !== today(ctx))
          return (await doneAt(ctx, "end of day", began)) || ctx.reply(expired(began));
        return ctx.reply("No answer, so no standup from you today. Say `standup` to answer later.");
      }
      // Answered after midnight: the answers are the set's day's, posted to its topic (the new
      // day is asked at its set time). Past the last answer nothing is logged: replays are alike.
      if (await done("post", began)) return;
      await close(ctx, "answered", `**${ctx.sender.name}**\n${answers.join("\n")}`, began);
      await ctx.reply(`Thanks! Posted to #**${s.channel}>standup ${began}**.`);
    });

    bot.command(
      "standup skip",
      { description: "skip today's standup", args: { reason: z.string().optional() }, rest: true },
      async (ctx) => {
        // The day answered or skipped already: its outcome and its topic's line stay as they are.
        if (await ctx.state.get(`${today(ctx)}:${ctx.sender.id}`)) return ctx.reply(DONE);
        const reason = ctx.args.reason ? `: ${ctx.args.reason}` : "";
        await close(ctx, "skipped", `**${ctx.sender.name}** skips today${reason}.`);
        return ctx.reply("Skipped for today.");
      },
    );

    bot.command(
      "standup report",
      { description: "who answered today's standup", allow: "moderator" },
      async (ctx) => {
        const lines = [];
        for (const id of ctx.groups.members(s.group) ?? []) {
          const outcome = (await ctx.state.get<string>(`${today(ctx)}:${id}`)) ?? "not yet";
          lines.push(`* ${(await ctx.users.get(id))?.full_name ?? id}: ${outcome}`);
        }
        const none =
          ctx.groups.members(s.group) === undefined
            ? `(no user group is named ${s.group})`
            : "(the group has no members)";
        await ctx.reply(`Standup ${today(ctx)}:\n${lines.join("\n") || none}`);
      },
    );
  },
});
