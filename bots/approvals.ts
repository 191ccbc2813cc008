/**
 * approvals: `deploy <service> <version>` in a channel topic asks a user group, except the person
 * who asked, to decide in that topic: `approve` or `reject` (or `1` / `2`, or the buttons). The
 * first member to decide does; whatever else members say there is their talk, which the bot stays
 * out of. Nobody within the deadline and the request expires. The requester may withdraw the
 * request by saying `withdraw` there (their other messages there are ordinary; an approver's
 * `withdraw` is no decision; `@**Approvals** withdraw` with none waiting says so). A second request
 * in a topic where one waits is refused, and so is one from a requester who has 20 waiting
 * elsewhere; a request whose question someone deleted ends undecided: the requester is told in
 * each case. An approval calls an outgoing webhook, signed as
 * bothost's inbound webhooks check (`X-Signature: t=…,v1=…`, HMAC-SHA256 of `<t>.<body>`), once its
 * answer is recorded: a crash during the call makes it again, with the same `request` (the asking
 * message's id) for the receiver to act on once. A call that fails on every attempt is told in the
 * topic, and an operator retries the kept request (`bothost failed retry`).
 *
 * The wait is a durable dialog (`ctx.prompt` with `from`): it survives restarts and deploys, and
 * operators see it in `bothost dialogs` (awaiting "a member of release-managers").
 *
 * Config:
 * ```yaml
 * bots:
 *   approvals:
 *     module: ./bots/approvals.ts
 *     email: approvals-bot@chat.example.org
 *     api_key: ${APPROVALS_BOT_API_KEY}
 *     settings:
 *       group: release-managers        # who may decide
 *       command: deploy                # default "deploy"
 *       timeout: 1d                    # default 1d
 *       webhook_url: https://ci.example.org/hooks/deploy   # optional: called on approval
 *       webhook_secret: ${DEPLOY_HOOK_SECRET}              # signs that call (16+ characters)
 * ```
 */
import { createHmac } from "node:crypto";
import { defineBot, groupSetting, PromptError } from "bothost";
import { z } from "zod";

const DURATION = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/;
const DAY_MS = 86_400_000;
const UNIT_MS: Record<string, number> = { d: DAY_MS, h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };
/** Milliseconds of a duration that matches DURATION (`1d12h`), as ctx.prompt reads its timeout. */
const durationMs = (text: string) =>
  [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)].reduce(
    (t, [, n, unit]) => t + Number(n) * UNIT_MS[unit!]!,
    0,
  );

export default defineBot({
  settings: z.object({
    group: groupSetting(z.string().min(1)),
    command: z.string().default("deploy"),
    /** Checked here, not at the first request: a wrong one would fail every request silently. */
    timeout: z
      .string()
      .regex(DURATION, 'must be a duration such as "4h", "1d" or "1d12h"')
      .refine((t) => durationMs(t) >= 1_000 && durationMs(t) <= 30 * DAY_MS, "must be from 1s to 30d")
      .default("1d"),
    // fetch refuses a URL with credentials, and its error quotes the whole URL into the logs.
    webhook_url: z
      .url({ protocol: /^https?$/ })
      .refine((u) => {
        // A text that is no URL is reported by z.url() above; zod runs this check all the same.
        if (!URL.canParse(u)) return true;
        const url = new URL(u);
        return url.username === "" && url.password === "";
      }, "must not hold a user or password (fetch refuses such a URL): authenticate with webhook_secret")
      .optional(),
    webhook_secret: z.string().min(16).optional(),
  }),
  setup(bot, s) {
    bot.track("groups", "reactions");
    // While a request waits, its requester's `withdraw` (with or without naming the bot) withdraws
    // it before any command runs; named to the bot with none waiting, it says so.
    bot.command("withdraw", { description: "withdraw your deploy request waiting in this topic" }, (ctx) =>
      ctx.reply("No deploy request of yours waits for a decision in this topic."),
    );
    const args = { service: z.string().min(1), version: z.string().min(1) };
    bot.command(s.command, { description: "ask for a deploy's approval", args }, async (ctx) => {
      const { service, version } = ctx.args;
      const what = `${service} ${version}`;
      // The question is asked where the request is: in a direct message, no approver would see it.
      if ("direct" in ctx.where)
        return ctx.reply(
          `Ask in a channel topic the members of ${s.group} read: they cannot see our direct messages.`,
        );
      // The wait it is asked with, kept in the dialog's log: a reload that changes `timeout` while
      // it waits leaves its deadline as it was, and its expiry tells this one.
      const timeout = await ctx.external("timeout", async () => s.timeout);
      const decision = await ctx
        .prompt(`**${ctx.sender.name}** asks to deploy **${what}**. A member of ${s.group} decides:`, {
          id: "decision",
          from: { group: s.group },
          except: [ctx.sender.id],
          choices: { approve: "check", reject: "cross_mark" },
          timeout,
          // The requester's word: the prompt says the reply (once) and rejects with PROMPT_CANCELLED.
          cancel: { word: "withdraw", reply: `Deploy of ${what} withdrawn by its requester.` },
        })
        .catch((err) => {
          if (!(err instanceof PromptError)) throw err;
          // Withdrawn: the prompt said so. Else the requester is told how the request ended undecided.
          if (err.code === "PROMPT_CANCELLED") return { ended: undefined };
          const ended = undecided(err.code, what, timeout);
          if (ended === undefined) throw err;
          return { ended };
        });
      if ("ended" in decision) {
        if (decision.ended !== undefined) await ctx.reply(decision.ended);
        return;
      }
      const by = decision.by.name ?? `user ${decision.by.id}`;
      if (decision.value === "reject") return ctx.reply(`Deploy of ${what} rejected by ${by}.`);
      const approved = `Deploy of ${what} approved by ${by}.`;
      if (!s.webhook_url) return ctx.reply(approved);
      // A dry run or a backtest: the webhook is outside what bothost captures, and it deploys.
      if (ctx.bot.dryRun) return ctx.reply(`${approved} (a dry run: the deploy webhook is not called)`);
      // Shown in the topic while the webhook is called. Should the call fail on every attempt, the
      // progress ends as failed with its note (the requester and the approver read it there) and
      // the request is kept as a dead letter: `bothost failed retry` calls the webhook again.
      // Ended by an operator while the call is under way (then cut by a stop), the bot does not
      // know whether the webhook took it: its endedNote says so.
      const progress = await ctx.progress(`${approved} Calling the deploy webhook…`, {
        failedNote: `${approved} The deploy webhook did not answer with success: ask an operator to retry it (\`bothost failed retry\`).`,
        endedNote: `${approved} An operator ended this request while the deploy webhook was called: whether the deploy started is not known here.`,
      });
      const request = ctx.event.message.id;
      await ctx.external("deploy-hook", () => callHook(s, { request, service, version, by }, ctx.signal));
      return progress.done(approved);
    });
  },
});

/**
 * POST the approval to the webhook, signed; resolves its status (recorded once it answered). The
 * run's signal cuts a receiver that does not answer at the bot's `handler_timeout` (then the
 * attempt fails and is tried again) and at a stop's deadline, rather than at fetch's own wait
 * for headers, 5 minutes.
 */
async function callHook(
  s: { webhook_url?: string; webhook_secret?: string },
  approval: object,
  signal: AbortSignal,
) {
  const body = JSON.stringify({ event: "deploy.approved", ...approval });
  const t = Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (s.webhook_secret)
    headers["x-signature"] =
      `t=${t},v1=${createHmac("sha256", s.webhook_secret).update(`${t}.${body}`).digest("hex")}`;
  const response = await fetch(s.webhook_url!, { method: "POST", headers, body, signal });
  if (!response.ok) throw new Error(`the deploy webhook answered ${response.status}`);
  return response.status;
}

/** What the requester is told when the request ends without a decision (by the prompt's error). */
function undecided(code: string, what: string, timeout: string): string | undefined {
  if (code === "PROMPT_TIMEOUT") return `Deploy of ${what} expired: nobody decided in ${timeout}.`;
  if (code === "PROMPT_PENDING")
    return `Another request waits for a decision in this topic: ask for ${what} again once it is decided.`;
  // The requester already has the most requests a person may have waiting (20, in other topics).
  if (code === "PROMPT_LIMIT")
    return `Too many of your deploy requests wait for a decision: ask for ${what} again once one of them is decided or withdrawn.`;
  // Talk that is no choice counts as an answer only in a request asked by an older bothost.
  if (code === "PROMPT_INVALID")
    return `Deploy of ${what} not decided: decide with approve or reject, or with the buttons.`;
  if (code === "PROMPT_DELETED") return `Deploy of ${what} not decided: its question was deleted.`;
  return undefined;
}
