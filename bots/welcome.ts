/**
 * welcome: greets every new member of the organization by direct message. The text is a saved
 * snippet of the bot's own account, looked up by title (edit the snippet to change the greeting,
 * no restart needed), or the `fallback` text while no such snippet exists. With `teams`, it then
 * asks which team they join and adds them to that team's user group (bots/welcome/teams.ts).
 *
 * Config:
 * ```yaml
 * bots:
 *   welcome:
 *     module: ./bots/welcome.ts
 *     email: welcome-bot@chat.example.org
 *     api_key: ${WELCOME_BOT_API_KEY}
 *     settings:
 *       snippet: Welcome                # title of a saved snippet of the bot's account (optional)
 *       fallback: "Welcome aboard, {{name}}! Say hi in #**general**."
 *       greet_guests: true              # default true
 *       catch_up_days: 7                # default 7: at a start, greet who joined while it was down
 *       teams:                          # optional: ask which team, add to its user group
 *         - { name: Backend, group: backend }
 *         - { name: Design, group: design }
 *       team_question: Which team do you join?   # default; the teams' names follow it
 *       notify: [ops-lead@chat.example.org]      # optional; default the administrators and owners
 * ```
 * The bot needs the right to add members to each team's group: an administrator adds it to the
 * group's "Who can add members to this group" (or the bot is an administrator itself). Without it,
 * the member is told an administrator will add them, and the `notify` people (by default every
 * administrator and owner, in one group direct message) are told what to change.
 * Placeholders, in the snippet and the fallback alike: {{name}} (full name), {{mention}} (a silent
 * mention, `@_**Name|id**`). The old single-brace spelling is refused in `fallback` (with the new
 * spelling named) and still filled in a snippet, with one warning per snippet text to rewrite it.
 * Each member is greeted once, ever (remembered in the bot's state); a team question that failed
 * after the greeting is asked by the retry or the next start, without a second greeting.
 * New members are seen through `realm_user` events while the bot runs; at each start it greets
 * who joined while it was down (within `catch_up_days`, default 7; 0 turns it off).
 * Moderators and above may ask it (in a direct message, or mentioning it) `greeted`: how many so far.
 */
import { type BaseContext, defineBot, parseTemplate, renderTemplate } from "bothost";
import { z } from "zod";
import { setupTeams, TeamSettings } from "./welcome/teams.ts";

/** A person as `realm_user` events and GET /users give them (the fields the bot reads). */
interface Person {
  user_id: number;
  full_name?: string;
  is_bot?: boolean;
  is_active?: boolean;
  role?: number;
}

export default defineBot({
  settings: TeamSettings.extend({
    /** Title of the bot's saved snippet holding the greeting. */
    snippet: z.string().trim().min(1).max(60).optional(),
    /** The greeting while the snippet is missing (or when none is configured). */
    fallback: z.string().trim().min(1).max(10_000).superRefine(checkPlaceholders),
    /** Greet guests too. */
    greet_guests: z.boolean().default(true),
    /** At a start, greet who joined within this many days while the bot was down (0: nobody). */
    catch_up_days: z.number().int().min(0).max(90).default(7),
  }),
  setup(bot, settings) {
    bot.track("snippets");
    const warned = new Set<string>();
    /** A snippet's text as a template; an old `{name}` still works, with one warning per text. */
    const greetingOf = (content: string): string => {
      const { legacy, upgraded } = parseTemplate(content);
      if (legacy.length > 0 && !warned.has(content)) {
        warned.add(content);
        const spelled = legacy.map((name) => `{${name}} → {{${name}}}`).join(", ");
        bot.log.warn(
          { snippet: settings.snippet },
          `the snippet "${settings.snippet}" uses the old placeholder spelling: edit it to read ${spelled}`,
        );
      }
      return upgraded;
    };

    const teams = setupTeams(bot, settings);

    /** Whom the bot greets: people (no bots), active, guests only with `greet_guests`. */
    const greets = (p: Person) =>
      !p.is_bot && p.is_active !== false && (p.role !== 600 || settings.greet_guests);
    /**
     * Greets `p` once, ever, then asks the team question; false when they were greeted before.
     * `by`: a `realm_user` event's run, whose sends are recorded (a retry finds the greeting sent and
     * sends it no second time, as long as it makes its sends in the same order), or a start's
     * catch-up, which keeps no records: once the greeting went out, a failure marks only the
     * question as owed, and the next start asks it alone.
     */
    const greet = async (
      ctx: Parameters<typeof teams.ask>[0],
      p: Person,
      by: Owed["by"],
    ): Promise<boolean> => {
      // Once per member, ever: an account that becomes visible again is not greeted twice. Claimed
      // at once, not staged with the run, as a mark saying the greeting is under way: a `realm_user`
      // event cut by a crash runs once more at the next start (`ctx.replayed`), and finds the mark.
      const key = `greeted:${p.user_id}`;
      const fresh = await ctx.state.immediate.setIfAbsent(key, { sending: ctx.now(), by });
      const mark = fresh ? undefined : await ctx.state.immediate.get(key);
      const owed = owedOf(mark);
      const sending = sendingOf(mark);
      // An event's run cut between the claim and the greeting's send (a kill) runs again and sends
      // it: found recorded when it went out, sent when it did not.
      let resend = by === "event" && sending?.by === "event";
      // A catch-up's cut or failed run recorded nothing: the next start looks in the direct
      // messages for what went out since the claim (one GET /messages), and sends what did not.
      let questionOnly = false;
      if (by === "start" && sending?.by === "start") {
        const found = await sentSince(ctx, p.user_id, sending.sending);
        if (found === 0) resend = true;
        else if (found === 1 && settings.teams.length > 0) questionOnly = true;
        else {
          await ctx.state.immediate.set(key, ctx.now());
          return false;
        }
      }
      if (!fresh && owed === undefined && !resend && !questionOnly) return false;
      // An event's run again (its question owed by an earlier attempt) makes the greeting's send
      // again: found recorded, not sent. Owed after a catch-up, which recorded nothing: the question alone.
      const greeting = fresh || resend || (by === "event" && owed?.by === "event");
      let greeted = !greeting;
      try {
        if (greeting) {
          const snippet = settings.snippet ? await ctx.snippets.get(settings.snippet) : undefined;
          const name = p.full_name ?? "there";
          const template = snippet ? greetingOf(snippet.content) : settings.fallback;
          const text = renderTemplate(template, { name, mention: `@_**${name}|${p.user_id}**` });
          await ctx.send({ type: "direct", to: [p.user_id], content: text });
          if (fresh || resend)
            ctx.log.info(
              { userId: p.user_id, fromSnippet: snippet !== undefined },
              by === "start" ? "greeted a member who joined while the bot was down" : "greeted a new member",
            );
        }
        greeted = true;
        await teams.ask(ctx, p.user_id);
      } catch (err) {
        // Not greeted: a retry or a later start may try again. Greeted, the question failed: it is
        // owed, by this run's kind if it greeted, else as after a catch-up (the question alone).
        // Not greeted by a catch-up: the greeting may have gone out (its answer lost), so the mark
        // stays for the next start to look.
        if (greeted)
          await ctx.state.immediate.set(key, { questionOwed: ctx.now(), by: greeting ? by : "start" });
        else if (by === "start")
          await ctx.state.immediate.set(key, { sending: sending?.sending ?? ctx.now(), by });
        else await ctx.state.immediate.delete(key);
        throw err;
      }
      await ctx.state.immediate.set(key, ctx.now());
      return fresh || resend;
    };

    bot.on("realm_user", async (ctx) => {
      const { op, person } = ctx.event;
      if (op === "add" && greets(person as Person)) await greet(ctx, person as Person, "event");
    });

    // Who joined while no queue of the bot was reading: `realm_user` events are not caught up, so
    // each start reads the members (one GET /users) and greets those who joined since the bot's
    // first start, within `catch_up_days`, and were not greeted.
    // The first start is kept with catch_up_days 0 too: a later start with catch-up on greets
    // who joined while the bot was down since then, not only since that later start.
    bot.onStart(async (ctx) => {
      const since = (await ctx.state.immediate.get("greeting-since")) as number | undefined;
      if (since === undefined) {
        await ctx.state.immediate.set("greeting-since", ctx.now()); // everyone there now joined before
        return;
      }
      if (settings.catch_up_days === 0) return;
      const from = Math.max(since, ctx.now() - settings.catch_up_days * 86_400_000);
      const { members } = await ctx.api.users.list();
      for (const p of members.filter((m) => greets(m) && Date.parse(m.date_joined) >= from)) {
        try {
          await greet(ctx, p, "start");
        } catch (err) {
          ctx.log.warn(
            { userId: p.user_id, ...failureOf(err) },
            `could not greet a member who joined while the bot was down (${(err as Error).message}); the next start tries again`,
          );
        }
      }
    });

    bot.command(
      "greeted",
      { description: "how many members the bot has greeted", allow: "moderator" },
      async (ctx) => {
        // Not a mark whose greeting is being sent, or failed at a start: not greeted (yet).
        const greeted = (await ctx.state.list("greeted:")).filter((e) => sendingOf(e.value) === undefined);
        await ctx.reply(`${greeted.length} member${greeted.length === 1 ? "" : "s"} greeted so far.`);
      },
    );
  },
});

/**
 * What the log says of a failed greeting besides its message: the server's code and status. Not
 * the error itself, whose stack would say where in bothost the answer was read: an outage or a
 * refusal is the server's or the organization's to fix, not a fault in code.
 */
function failureOf(err: unknown): { code?: unknown; status?: unknown } {
  const { code, status } = (err ?? {}) as { code?: unknown; status?: unknown };
  return { ...(code !== undefined ? { code } : {}), ...(status !== undefined ? { status } : {}) };
}

/** A member's greeted mark once the greeting went out and the team question did not: by whose run. */
interface Owed {
  questionOwed: number;
  by: "event" | "start";
}

/**
 * How many direct messages the bot sent `userId` from 30 s before `sinceMs` (the server's clock may
 * be behind) on: what a catch-up cut after its claim got out, the greeting and the team question.
 */
async function sentSince(
  ctx: Pick<BaseContext<unknown>, "api" | "bot" | "signal">,
  userId: number,
  sinceMs: number,
) {
  const { messages } = await ctx.api.messages.get(
    { anchor: "newest", num_before: 10, num_after: 0, narrow: [{ operator: "dm", operand: [userId] }] },
    { signal: ctx.signal },
  );
  return messages.filter((m) => m.sender_id === ctx.bot.userId && m.timestamp * 1000 >= sinceMs - 30_000)
    .length;
}

/** A member's greeted mark while the greeting is being sent: by whose run. */
interface Sending {
  sending: number;
  by: "event" | "start";
}

/** `mark`, if it says the greeting is being sent. */
function sendingOf(mark: unknown): Sending | undefined {
  return typeof mark === "object" && mark !== null && "sending" in mark ? (mark as Sending) : undefined;
}

/** `mark`, if it says the team question is owed. */
function owedOf(mark: unknown): Owed | undefined {
  return typeof mark === "object" && mark !== null && "questionOwed" in mark ? (mark as Owed) : undefined;
}

/** Refuses placeholders the greeting does not fill, and the old `{name}` spelling. */
function checkPlaceholders(text: string, ctx: z.RefinementCtx): void {
  for (const message of parseTemplate(text, ["name", "mention"]).problems) {
    ctx.addIssue({ code: "custom", message });
  }
}
