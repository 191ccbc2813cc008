/**
 * standup: on weekdays at a set time, asks each member of a user group three questions in a direct
 * message, one after the other, and posts each person's answers to a channel topic of the day
 * (`standup 2026-11-30`). Anyone can say `standup` to answer at another time (once a day), in
 * a channel too: the questions are then asked in their direct messages;
 * answering `skip`, or saying `standup skip [reason]`, skips the day; moderators get
 * `standup report`: who answered, who skipped, who has not yet.
 *
 * The questions are a durable dialog (`ctx.prompt`): a restart, a crash or a deploy in the middle
 * of someone's answers goes on at the question they were at, each answer under its question.
 * Down at the set time, the daemon asks at its start, the same day only.
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
 *       wait: 4h                       # how long each question waits; default 4h
 * ```
 * The bot must be subscribed to `channel`.
 */
import { type BotContext, defineBot, PromptError, type Sender, validateSchedule } from "bothost";
import { z } from "zod";

export const QUESTIONS = ["What did you do yesterday?", "What will you do today?", "Anything blocking you?"];
const KEEP = { ttlMs: 8 * 86_400_000 };
const DONE = "You are done for today.";
export const UNDER_WAY = "Your standup questions are already under way here: answer the question above.";
export const SENT = "I've sent you today's questions in a direct message.";
export const WAITING = "Your questions are waiting in our direct messages.";

export default defineBot({
  settings: z
    .object({
      group: z.string().min(1),
      channel: z.string().min(1),
      cron: z.string().default("30 9 * * 1-5"),
      timezone: z.string().default("UTC"),
      /** A duration as the config writes them: `4h`, `90m`, `1h30m`. */
      wait: z
        .string()
        .regex(/^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/, 'must be a duration such as "4h", "90m" or "1h30m"')
        .default("4h"),
    })
    // Checked here, not first by bot.cron in setup, so a mistake is reported at its config line.
    .superRefine((s, ctx) => {
      try {
        validateSchedule({ cron: s.cron, timezone: s.timezone });
      } catch (err) {
        const field = (err as { field?: string }).field === "timezone" ? "timezone" : "cron";
        ctx.addIssue({ code: "custom", path: [field], message: (err as Error).message });
      }
    }),
  setup(bot, s) {
    bot.track("groups");
    const day = (ms: number) => new Date(ms).toLocaleDateString("en-CA", { timeZone: s.timezone });
    const today = (ctx: { now(): number }) => day(ctx.now());
    // Records the day's outcome for the person, and posts it to the day's topic.
    const close = async (ctx: BotContext & { sender: Sender }, outcome: string, content: string) => {
      await ctx.state.set(`${today(ctx)}:${ctx.sender.id}`, outcome, KEEP);
      await ctx.send({ type: "channel", to: s.channel, topic: `standup ${today(ctx)}`, content });
    };

    // Whether the person has an outcome today, as read when their dialog first reached `at`: kept
    // in its log (ctx.external), so that its replays take the path it took, whatever their other
    // conversations recorded since (else a replay would stop where the first run asked).
    const doneAt = (ctx: BotContext & { sender: Sender }, at: string) => {
      // The key is made outside `fn`: its `ctx.now()` is then a value of the log at every run.
      const key = `${today(ctx)}:${ctx.sender.id}`;
      return ctx.external(`done at ${at}`, async () => Boolean(await ctx.state.get(key)));
    };

    // An occurrence missed while the daemon was down (a deploy or a crash across the set time) is
    // run once at its start, the same day only: a day missed altogether is not asked the next.
    bot.cron(s.cron, { timezone: s.timezone, missed: "run-once" }, async (ctx) => {
      if (ctx.job.catchUp && day(ctx.job.scheduledFor.getTime()) !== today(ctx)) return;
      for (const id of ctx.groups.members(s.group) ?? []) {
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
      // Before each question, and before the answers are posted: done already (in another
      // conversation of theirs, say), nothing more is asked or posted.
      const done = async (at: string) => (await doneAt(ctx, at)) && Boolean(await ctx.reply(DONE));
      if (await done("start")) return;
      const answers: string[] = [];
      try {
        for (const [i, q] of QUESTIONS.entries()) {
          if (i > 0 && (await done(`question ${i + 1}`))) return;
          const cancel = { word: "skip", reply: "Skipped for today." };
          answers.push(`* ${q} ${(await ctx.prompt(q, { timeout: s.wait, cancel })).text}`);
        }
      } catch (err) {
        if (!(err instanceof PromptError)) throw err;
        // The set time's questions began for them while this message was on its way: asked once.
        if (err.code === "PROMPT_PENDING") return ctx.reply(UNDER_WAY);
        // Done meanwhile in another conversation: there is nothing left to skip or to miss.
        if (await doneAt(ctx, "end")) return;
        if (err.code === "PROMPT_CANCELLED")
          return close(ctx, "skipped", `**${ctx.sender.name}** skips today.`);
        return ctx.reply("No answer, so no standup from you today. Say `standup` to answer later.");
      }
      if (await done("post")) return;
      await close(ctx, "answered", `**${ctx.sender.name}**\n${answers.join("\n")}`);
      await ctx.reply(`Thanks! Posted to #**${s.channel}>standup ${today(ctx)}**.`);
    });

    bot.command(
      "standup skip",
      { description: "skip today's standup", args: { reason: z.string().optional() }, rest: true },
      async (ctx) => {
        const reason = ctx.args.reason ? `: ${ctx.args.reason}` : "";
        await close(ctx, "skipped", `**${ctx.sender.name}** skips today${reason}.`);
        await ctx.reply("Skipped for today.");
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
        await ctx.reply(`Standup ${today(ctx)}:\n${lines.join("\n") || "(the group has no members)"}`);
      },
    );
  },
});
