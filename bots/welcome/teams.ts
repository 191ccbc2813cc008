/**
 * The welcome bot's team question: after the greeting, a new member is asked which team they join,
 * and their answer adds them to that team's user group. When the bot may not change the group, the
 * member is told so and the administrators (or the `notify` people) get one direct message naming
 * the member, the group and the setting to change.
 */
import {
  type BaseContext,
  type BotApi,
  type CommandContext,
  type GroupPermissionError,
  groupSetting,
  userSetting,
} from "bothost";
import { z } from "zod";

export const TeamSettings = z.object({
  /** The teams a new member may pick: the name they answer with, and the user group it adds them to. */
  teams: z
    .array(
      z.object({
        name: z.string().trim().min(1).max(60),
        group: groupSetting(z.string().trim().min(1).max(100)),
      }),
    )
    .max(25)
    .default([]),
  /** The question; the teams' names follow it. */
  team_question: z.string().trim().min(1).max(1000).default("Which team do you join?"),
  /**
   * Emails of who hears when the bot may not add a member; default the administrators and owners.
   * User settings: `bothost check` and each start name an address that names nobody.
   */
  notify: z.array(userSetting(z.email())).min(1).optional(),
});
type Settings = z.infer<typeof TeamSettings>;
type Team = Settings["teams"][number];

const asked = (userId: number) => `team-asked:${userId}`;

/** Declare the `team` command and the answer handler; returns how to ask a new member. */
export function setupTeams<S>(bot: BotApi<S>, settings: Settings) {
  const { teams } = settings;
  if (teams.length === 0) return { ask: async (_ctx: BaseContext<S>, _userId: number) => {} };
  bot.track("groups");
  const question = `${settings.team_question} ${teams.map((t) => `**${t.name}**`).join(", ")} (answer with the name).`;
  const named = (text: string) =>
    teams.find(
      (t) =>
        t.name.toLowerCase() ===
        text
          .replace(/^[*`"']+|[*`"'.!]+$/g, "")
          .trim()
          .toLowerCase(),
    );
  // `team backend` said while the question waits is an answer, not a command: it names Backend.
  const find = (text: string) => named(text) ?? named(text.trim().replace(/^team\s+/i, ""));

  /** Ask up to twice; `undefined` when the answers name no team (a timeout ends the run, handled). */
  const promptTeam = async (ctx: CommandContext<S>, first: string): Promise<Team | undefined> => {
    let ask = first;
    for (let i = 0; i < 2; i++) {
      const answer = await ctx.prompt(ask);
      const team = find(answer.text);
      if (team) return team;
      ask = `I don't know the team "${answer.text}". ${question}`;
    }
    await ctx.reply("No team for now: say `team` when you know yours.");
    return undefined;
  };

  const notify = async (ctx: BaseContext<S>, content: string) => {
    const admins = (await ctx.users.list()).filter((u) => u.role <= 200 && !u.is_bot && u.is_active);
    let to = admins.map((u) => u.user_id);
    if (settings.notify) {
      // An address that names nobody (a typo, someone gone) would fail the whole message: the
      // others are told, or the administrators when none is left, and the entry is logged.
      const found = await Promise.all(settings.notify.map((email) => ctx.users.get(email)));
      const missing = settings.notify.flatMap((email, i) => (found[i] ? [] : [`notify[${i}]: ${email}`]));
      if (missing.length > 0)
        ctx.log.warn(
          { entries: missing },
          `${missing.join(", ")} names no user the bot can see; ${missing.length < settings.notify.length ? "the others" : "the administrators and owners"} were told instead. List each person by an email the bot sees, or fix the address.`,
        );
      const ids = found.flatMap((u) => (u ? [u.user_id] : []));
      if (ids.length > 0) to = ids;
    }
    if (to.length === 0)
      ctx.log.warn({ content }, "nobody to notify: no administrators and no `notify` setting");
    else await ctx.send({ type: "direct", to, content });
  };

  const join = async (ctx: CommandContext<S>, team: Team) => {
    await ctx.state.delete(asked(ctx.sender.id));
    const groupId = ctx.groups.idOf(team.group);
    if (groupId === undefined) {
      await ctx.reply(`I can't find the group of ${team.name}; I've told the administrators.`);
      await notify(
        ctx,
        `The welcome bot adds members of ${team.name} to the user group "${team.group}", which does not exist: create it, or correct the bot's \`teams\` setting.`,
      );
      return;
    }
    let joined: "added" | "already";
    try {
      // Recorded for the message: a run again after a crash that followed the add (before the
      // reply) reads "added", not the membership it made itself.
      joined = await ctx.external(`join ${team.group}`, async () => {
        if (ctx.groups.has(groupId, ctx.sender.id)) return "already";
        try {
          await ctx.api.userGroups.updateMembers(groupId, { add: [ctx.sender.id] });
        } catch (err) {
          // Added by a run of this message cut before the add was recorded: the group cache did not know yet.
          const e = err as { name?: string; msg?: string };
          if (e.name !== "ApiError" || !/already a member/i.test(e.msg ?? "")) throw err;
        }
        return "added";
      });
    } catch (err) {
      // By name, not instanceof: the bot and the daemon running it may load separate copies of bothost.
      const e = err as Partial<GroupPermissionError>;
      if (e.name !== "GroupPermissionError") throw err;
      ctx.log.warn({ group: team.group }, "may not add members to the group; the administrators were told");
      await ctx.reply(`I may not add you to ${team.name} myself; I've asked an administrator to.`);
      await notify(
        ctx,
        `@_**${ctx.sender.name}|${ctx.sender.id}** joins **${team.name}**, but I may not add members to the user group "${team.group}": please add them. ${e.fix}`,
      );
      return;
    }
    if (joined === "already") await ctx.reply(`You are in ${team.name} already.`);
    else await ctx.reply(`Welcome to ${team.name}! You are now in the group @_*${team.group}*.`);
  };

  bot.command(
    "team",
    { description: "join your team's user group", args: { name: z.string().optional() }, rest: true },
    async (ctx) => {
      const team = ctx.args.name ? find(ctx.args.name) : await promptTeam(ctx, question);
      if (ctx.args.name && !team) await ctx.reply(`I don't know the team "${ctx.args.name}". ${question}`);
      else if (team) await join(ctx, team);
    },
  );

  // The answer to the question the greeting asked: a direct message (no command) from someone asked.
  bot.on("message", { direct: true }, async (ctx, next) => {
    const c = ctx as unknown as CommandContext<S>;
    if ((await ctx.state.get(asked(c.sender.id))) === undefined) return next();
    const team = find(ctx.text) ?? (await promptTeam(c, `I don't know the team "${ctx.text}". ${question}`));
    if (team) await join(c, team);
  });

  return {
    /**
     * Ask a new member, by direct message, after the greeting. The mark is written at once, before
     * the question goes out, and kept when the send fails (the question may have gone out): a
     * mark staged with its run would be lost with a run cut by a crash while the question was
     * already sent, and the member's answer after the restart would not be taken.
     */
    ask: async (ctx: BaseContext<S>, userId: number) => {
      await ctx.state.immediate.set(asked(userId), ctx.now());
      await ctx.send({ type: "direct", to: [userId], content: question });
    },
  };
}
