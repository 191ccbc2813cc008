/**
 * An operator ends a dialog whose question waits in another conversation (`where`), against the
 * sandbox over HTTP in a daemon in this process, ended through its admin route: the person is
 * told where the dialog began, and named there when that is a channel topic; a topic moved since
 * (resolved) is told in its new place.
 */
import { request } from "undici";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { type InProcessDaemon, startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { freePort } from "../support/free-port.ts";

const BOT = "confirm-bot@sandbox.example";
const MEMBER = "member@sandbox.example";

const confirm = defineBot({
  setup(bot) {
    bot.command("confirm", async (ctx) => {
      const sure = await ctx.prompt("Sure?", { where: { direct: [ctx.sender!.id] } });
      await ctx.reply(`You said ${sure.text}.`);
    });
    bot.command("ask", async (ctx) => {
      await ctx.prompt("Which?");
    });
  },
});

let sandbox: Sandbox;
let running: InProcessDaemon;
let base: string;
beforeEach(async () => {
  sandbox = await startSandbox({
    org: {
      realm: { name: "Sandbox", host: "sandbox.example" },
      users: [
        { email: "owner@sandbox.example", full_name: "Olive Owner", role: "owner" },
        { email: MEMBER, full_name: "Mel Member" },
      ],
      bots: [{ email: BOT, full_name: "confirm", type: "generic", owner: "owner@sandbox.example" }],
      channels: [{ name: "general", subscribers: ["owner@sandbox.example", MEMBER, BOT] }],
    },
  });
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  running = await startInProcessDaemon(
    sandbox,
    { confirm: { email: BOT, definition: confirm } },
    { global: `http:\n  listen: 127.0.0.1:${port}` },
  );
});
afterEach(async () => {
  await running?.stop();
  await sandbox?.stop();
});

const botSaid = () => {
  const id = sandbox.control.users().find((u) => u.email === BOT)!.user_id;
  return sandbox.control.messages().filter((m) => m.sender_id === id);
};

it("the operator's note goes where the dialog began, naming the person in its topic", async () => {
  sandbox.control.sendAs(MEMBER, {
    type: "stream",
    to: "general",
    topic: "deploys",
    content: "@**confirm** confirm",
  });
  const dialogs = () => running.daemon.bots.find((b) => b.name === "confirm")!.dialogs();
  await vi.waitFor(() => expect(dialogs()).toMatchObject([{ where: "direct message" }]), { timeout: 10_000 });

  const ended = await request(`${base}/admin/dialogs/confirm/${dialogs()[0]!.id}/end`, { method: "POST" });
  expect(ended.statusCode).toBe(200);
  await vi.waitFor(() => expect(botSaid()).toHaveLength(2), { timeout: 10_000 });
  const member = sandbox.control.users().find((u) => u.email === MEMBER)!;
  expect(botSaid()[1]).toMatchObject({
    type: "stream",
    topic: "deploys",
    content: `@**${member.full_name}|${member.user_id}** An operator ended this conversation.`,
  });
});

it("after the dialog's topic was resolved, the operator's note goes to the resolved topic", async () => {
  const asked = sandbox.control.sendAs(MEMBER, {
    type: "stream",
    to: "general",
    topic: "deploys",
    content: "@**confirm** ask",
  });
  const dialogs = () => running.daemon.bots.find((b) => b.name === "confirm")!.dialogs();
  await vi.waitFor(() => expect(dialogs()).toMatchObject([{ where: "#general > deploys" }]), {
    timeout: 10_000,
  });
  // The owner resolves the topic once the bot's queue receives message moves.
  await vi.waitFor(
    () => expect(sandbox.control.queues().some((q) => q.event_types?.includes("update_message"))).toBe(true),
    { timeout: 10_000 },
  );
  const owner = "owner@sandbox.example";
  const auth = Buffer.from(`${owner}:${sandbox.control.apiKeyOf(owner)}`).toString("base64");
  const moved = await request(`${sandbox.url}/api/v1/messages/${asked.id}`, {
    method: "PATCH",
    headers: { authorization: `Basic ${auth}`, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ topic: "✔ deploys", propagate_mode: "change_all" }).toString(),
  });
  expect(moved.statusCode).toBe(200);
  await vi.waitFor(() => expect(dialogs()).toMatchObject([{ where: "#general > ✔ deploys" }]), {
    timeout: 10_000,
  });

  const ended = await request(`${base}/admin/dialogs/confirm/${dialogs()[0]!.id}/end`, { method: "POST" });
  expect(ended.statusCode).toBe(200);
  await vi.waitFor(() => expect(botSaid()).toHaveLength(2), { timeout: 10_000 });
  expect(botSaid().map((m) => `${m.topic}: ${String(m.content).replace(/^@\*\*[^*]+\*\* /, "")}`)).toEqual([
    "✔ deploys: Which?",
    "✔ deploys: An operator ended this conversation.",
  ]);
});
