/**
 * A question with buttons sent, then the process stopped before its log was written (the store
 * refusing that write, as a crash after the send leaves it), and, while no process ran, the
 * question alone moved (to another topic, or to a channel the bot is not in; its request stays)
 * and its button pressed: the next start finds the question made, reads it back (one GET; once
 * more among the public channels for a channel the bot is not in), follows the move and takes the
 * press there, the answer said in the question's new place. Before, the press was dropped when the
 * question had moved, and the dialog waited for a press already made. A real daemon in this
 * process on the test clock against the sandbox over HTTP; the store is a FileStore whose dialog
 * writes pass a gate.
 */
import { afterEach, expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import { defineBot } from "../../src/bot/define-bot.ts";
import {
  closeGatedDaemon,
  type GatedDaemon,
  questionShown,
  restartPastStop,
  startGatedDaemon,
} from "../support/gated-daemon.ts";
import { StoreGate } from "../support/gated-store.ts";

const BOT = "deploy-bot@sandbox.example";
const MEMBER = "member@sandbox.example";
const OWNER = "owner@sandbox.example";
const QUESTION = "Deploy api 1.4.2?";

const deploys = defineBot({
  setup(bot) {
    bot.command("deploy", async (ctx) => {
      const decision = await ctx.prompt(QUESTION, { choices: { approve: "check", reject: "cross_mark" } });
      await ctx.reply(`decided: ${decision.value}`);
    });
  },
});

let up: GatedDaemon | undefined;
let gate = new StoreGate();
afterEach(async () => {
  gate.open();
  await closeGatedDaemon(up);
  up = undefined;
});

/** The sandbox's API as `email`, through bothost's own client. */
const as = (email: string) =>
  createClient({ url: up!.sandbox.url, email, apiKey: up!.sandbox.control.apiKeyOf(email) });

/** Channel ids → names, for {@link botSaid}. */
const channels = new Map<unknown, string>();

/** The bot's messages, as `channel: topic: content` (its first line), oldest first. */
function botSaid(): string[] {
  const { control } = up!.sandbox;
  const botId = control.users().find((u) => u.email === BOT)!.user_id;
  return control
    .messages()
    .filter((m) => m.sender_id === botId)
    .map((m) => `${channels.get(m.stream_id)}: ${m.topic}: ${String(m.content).split("\n")[0]}`);
}

/** The bot's GET /messages calls so far. */
const reads = () =>
  up!.sandbox.control.requests.filter((r) => r.method === "GET" && r.path === "/messages" && r.email === BOT)
    .length;

it.each<[string, { topic?: string; channel?: string }, string]>([
  ["moved to another topic", { topic: "api deploys" }, "general: api deploys"],
  ["moved to a channel the bot is not in", { channel: "ops" }, "ops: deploys"],
])(
  "a question found made at a start, %s and its button pressed while down: the press decides there",
  async (_, to, where) => {
    gate = new StoreGate();
    up = await startGatedDaemon({
      name: "deploys",
      email: BOT,
      fullName: "Deploys",
      definition: deploys,
      extra: "handler_timeout: 1h",
      gate,
      channels: ["general"],
    });
    const { control } = up.sandbox;
    // A public channel the bot is not in.
    const owner = as(OWNER);
    await owner.request("POST", "/users/me/subscriptions", {
      subscriptions: [{ name: "ops" }],
      principals: [OWNER, MEMBER],
    });
    for (const name of ["general", "ops"])
      channels.set(
        ((await owner.request("GET", "/get_stream_id", { stream: name })) as { stream_id: number }).stream_id,
        name,
      );
    // An older request waits in another topic: the next start's queue is registered with the
    // reactions and moves its question needs (no new queue after the start, whose catch-up of
    // reactions would take the press too).
    control.sendAs(MEMBER, { type: "stream", to: "general", topic: "older", content: "@**Deploys** deploy" });
    await expect
      .poll(() => up!.running.daemon.bots[0]!.dialogs().map((d) => d.deadline !== undefined))
      .toEqual([true]);
    gate.mode = "fail";
    control.sendAs(MEMBER, {
      type: "stream",
      to: "general",
      topic: "deploys",
      content: "@**Deploys** deploy",
    });
    // Sent with its two buttons; its log's first write refused.
    const question = await questionShown(up, BOT, QUESTION, "deploys");
    await gate.stoppedAt(1);

    let before = 0;
    const again = await restartPastStop(up, async () => {
      // The question alone (its request stays where it was).
      const params: Record<string, string> = { propagate_mode: "change_one" };
      if (to.topic !== undefined) params.topic = to.topic;
      if (to.channel !== undefined)
        params.stream_id = String([...channels].find(([, name]) => name === to.channel)![0]);
      await owner.request("PATCH", `/messages/${question}`, params);
      await as(MEMBER).reactions.add(question, { emoji_name: "check" });
      gate.open();
      before = reads();
    });

    await expect
      .poll(botSaid, { timeout: 15_000 })
      .toEqual([`general: older: ${QUESTION}`, `${where}: ${QUESTION}`, `${where}: decided: approve`]);
    // Its end written after its reply: the older request alone waits.
    await expect
      .poll(() => again.daemon.bots[0]!.dialogs().map((d) => d.where))
      .toEqual(["#general > older"]);
    // The start's catch-up of messages, the reactions on the older question, and the question read
    // back once (in a channel the bot is not in, once more among the public channels'): taking the
    // press read no more.
    expect(reads() - before).toBe(to.channel ? 4 : 3);
  },
);
