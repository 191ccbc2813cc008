/**
 * A question for others (`from`) decided, its answer's write slow (a store that holds it, as a
 * slow Redis does), and a new request in the topic meanwhile: the decision came first, so the
 * dialog runs first (its outcome said, its end kept), and the new request is asked. Before, the
 * new request ran first and was refused with PROMPT_PENDING ("another request waits"), the
 * decision said after it. By a press and by a typed choice. A real daemon in this process on the
 * test clock against the sandbox over HTTP; the dialogs' writes pass a gate.
 */
import { afterEach, expect, it } from "vitest";
import { z } from "zod";
import { createClient } from "../../src/api/create-client.ts";
import { defineBot } from "../../src/bot/define-bot.ts";
import { PromptError } from "../../src/pipeline/dialogs/prompt-error.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { StoreGate } from "../support/gated-store.ts";

const BOT = "approvals-bot@sandbox.example";
const REQUESTER = "member@sandbox.example";
const APPROVER = "owner@sandbox.example";

/** The approver's id, once the sandbox is up. */
let approver = 0;

const approvals = defineBot({
  setup(bot) {
    bot.track("reactions");
    bot.command("deploy", { args: { service: z.string() } }, async (ctx) => {
      const what = ctx.args.service;
      try {
        const decision = await ctx.prompt(`Deploy ${what}?`, {
          from: approver,
          choices: { approve: "check", reject: "cross_mark" },
        });
        await ctx.reply(`${what}: ${decision.value}d by ${decision.by.name}.`);
      } catch (err) {
        if (!(err instanceof PromptError && err.code === "PROMPT_PENDING")) throw err;
        await ctx.reply(`${what}: another request waits here.`);
      }
    });
  },
});

const DAEMON = { name: "approvals", email: BOT, fullName: "Approvals", channels: ["general"] };
let up: GatedDaemon | undefined;
let gate: StoreGate | undefined;
afterEach(() => {
  gate?.open();
  return closeGatedDaemon(up);
});

const request = (what: string) =>
  up!.sandbox.control.sendAs(REQUESTER, {
    type: "stream",
    to: "general",
    topic: "deploys",
    content: `@**Approvals** deploy ${what}`,
  });
const idOf = (email: string) => up!.sandbox.control.users().find((u) => u.email === email)!.user_id;
/** The first line of each message of the bot's, oldest first. */
function said(): string[] {
  const mine = up!.sandbox.control.messages().filter((m) => m.sender_id === idOf(BOT));
  return mine.map((m) => String(m.content).split("\n")[0]!);
}

it.each(["a press", "a typed choice"])(
  "decided by %s, its write slow: a new request after it is asked",
  async (how) => {
    gate = new StoreGate();
    up = await startGatedDaemon({ ...DAEMON, definition: approvals, gate });
    approver = idOf(APPROVER);
    const { control } = up.sandbox;
    const bot = up.running.daemon.bots[0]!;
    request("api");
    const question = await control.waitFor(() => {
      const m = control.messages().find((x) => x.sender_id === idOf(BOT));
      const buttons = (control.messageView(Number(m?.id))?.reactions ?? []) as unknown[];
      return buttons.length === 2 && Number(m!.id);
    });
    await expect.poll(() => bot.dialogs().map((d) => d.deadline !== undefined)).toEqual([true]);

    // The decision's write is held; the next request comes in meanwhile.
    gate.mode = "hang";
    const approverApi = createClient({
      url: up.sandbox.url,
      email: APPROVER,
      apiKey: control.apiKeyOf(APPROVER),
    });
    if (how === "a press") await approverApi.reactions.add(question, { emoji_name: "check" });
    else control.sendAs(APPROVER, { type: "stream", to: "general", topic: "deploys", content: "approve" });
    await gate.stoppedAt(1);
    const received = bot.stats.received;
    request("web");
    await expect.poll(() => bot.stats.received).toBe(received + 1);
    gate.open();

    await expect.poll(said, { timeout: 15_000 }).toHaveLength(3);
    expect(said()).toEqual(["Deploy api?", "api: approved by Olive Owner.", "Deploy web?"]);
    await expect.poll(() => bot.dialogs().map((d) => d.deadline !== undefined)).toEqual([true]);
  },
);
