/**
 * Commands against the sandbox over HTTP: a bot run in-process by the testing kit (a real daemon,
 * real requests), people posting to it as they would in a chat.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineBot } from "../../../src/bot/define-bot.ts";
import { startSandbox } from "../../../src/sandbox/start-sandbox.ts";
import type { OrgInput, Sandbox } from "../../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../../src/testing/run-bot.ts";

const OWNER = "owner@sandbox.example";
const MOD = "mod@sandbox.example";
const MEMBER = "member@sandbox.example";
const ORG: OrgInput = {
  realm: { name: "Sandbox", host: "sandbox.example" },
  users: [
    { email: OWNER, full_name: "Olive Owner", role: "owner" },
    { email: MOD, full_name: "Moe Moderator", role: "moderator" },
    { email: MEMBER, full_name: "Mel Member", role: "member" },
  ],
  bots: [{ email: "helper-bot@sandbox.example", full_name: "Helper", type: "generic", owner: OWNER }],
  channels: [
    { name: "general", subscribers: [OWNER, MOD, MEMBER, "helper-bot@sandbox.example"], is_default: true },
  ],
  user_groups: [{ name: "support", members: [MEMBER] }],
};

const helper = defineBot({
  setup(bot) {
    bot.command(
      "remind",
      {
        description: "remind you in a few minutes",
        args: { minutes: z.number().int().min(1).max(1440).describe("how many minutes"), text: z.string() },
        rest: true,
        options: { loud: z.boolean().default(false) },
        aliases: ["r"],
        examples: ["remind 5 tea"],
      },
      (ctx) => ctx.reply(`in ${ctx.args.minutes} min: ${ctx.args.text}${ctx.options.loud ? "!" : ""}`),
    );
    bot.command("stats", { description: "what happened", allow: "moderator" }, (ctx) =>
      ctx.reply("all quiet"),
    );
    bot.command("triage", { allow: { groups: ["support"] } }, (ctx) =>
      ctx.reply(`triaging, ${ctx.sender.name}`),
    );
    bot.command("whoami", (ctx) => ctx.reply(`${ctx.sender.name} (${ctx.sender.role})`));
    bot.command("where", (ctx) =>
      ctx.send({
        ...ctx.where,
        content: "direct" in ctx.where ? "in a DM" : `in #${ctx.where.channel} > ${ctx.where.topic}`,
      }),
    );
    bot.command("order", { args: { wait: z.number().int() } }, async (ctx) => {
      try {
        const size = await ctx.prompt("Which size?", { timeout: ctx.args.wait });
        await ctx.reply(`one ${size.text} coffee`);
      } catch (err) {
        await ctx.reply(`no answer: ${(err as Error & { code: string }).code}`);
      }
    });
  },
});

let sandbox: Sandbox;
let bot: TestBot;
beforeEach(async () => {
  sandbox = await startSandbox({ org: ORG });
  bot = await runBot(sandbox, { bot: helper, name: "helper", email: "helper-bot@sandbox.example" });
});
afterEach(async () => {
  await bot.stop();
  await sandbox.stop();
});

const dm = (from: string, content: string) => bot.ask(from, { type: "direct", to: [bot.email], content });
const inGeneral = (from: string, content: string) =>
  bot.ask(from, { type: "stream", to: "general", topic: "chat", content });

describe("a command", () => {
  it("runs from a direct message with its arguments parsed and typed", async () => {
    expect((await dm(MEMBER, "remind 5 put the kettle on")).content).toBe("in 5 min: put the kettle on");
    expect((await dm(MEMBER, "R 5 tea --loud")).content).toBe("in 5 min: tea --loud");
    expect((await dm(MEMBER, "REMIND --loud 5 tea")).content).toBe("in 5 min: tea!");
  });

  it("runs when the bot is mentioned anywhere in a channel message, and answers there", async () => {
    const reply = await inGeneral(MEMBER, "@**Helper** remind 1 stretch");
    expect(reply).toMatchObject({ content: "in 1 min: stretch", type: "stream" });
    expect((await inGeneral(MEMBER, `whoami @**Helper|${bot.userId}**`)).content).toBe("Mel Member (member)");
  });

  it("gives ctx.where, which ctx.send takes as the target", async () => {
    expect(await inGeneral(MEMBER, "@**Helper** where")).toMatchObject({
      content: "in #general > chat",
      type: "stream",
    });
    expect(await dm(MEMBER, "where")).toMatchObject({ content: "in a DM", type: "private" });
  });

  it("ignores silent mentions and unaddressed channel messages", async () => {
    bot.post(MEMBER, { type: "stream", to: "general", topic: "chat", content: "@_**Helper** stats" });
    bot.post(MEMBER, { type: "stream", to: "general", topic: "chat", content: "remind 5 tea" });
    const last = await inGeneral(MEMBER, "@**Helper** whoami");
    expect(last.content).toBe("Mel Member (member)");
    expect(bot.replies()).toHaveLength(1);
  });

  it("answers wrong arguments with what was wrong and the usage, never a stack trace", async () => {
    expect((await dm(MEMBER, "remind five tea")).content).toBe(
      '`remind`: <minutes>: expected a number, got "five".\nUsage: `remind <minutes> <text...> [--loud]` (`help remind` for more)',
    );
    expect((await dm(MEMBER, "remind 5")).content).toMatch(/^`remind`: <text> is missing\.\nUsage:/);
    expect((await dm(MEMBER, "remind --lod 5 tea")).content).toBe(
      '`remind`: unknown option "--lod" (did you mean "--loud"?).\nUsage: `remind <minutes> <text...> [--loud]` (`help remind` for more)',
    );
    expect((await dm(MEMBER, "remind --lodu 0 tea")).content).toMatch(
      /^`remind`: unknown option "--lodu" \(did you mean "--loud"\?\); <minutes>: expected at least 1, got "0"\./,
    );
  });

  it("answers an unknown command with the closest names", async () => {
    expect((await dm(MEMBER, "remnid 5 tea")).content).toBe(
      "I don't know the command `remnid`. Did you mean `remind`? Say `help` for the list.",
    );
    expect((await dm(MEMBER, "dance")).content).toBe(
      "I don't know the command `dance`. Say `help` for the list.",
    );
  });

  it("generates help and help <command>", async () => {
    const list = (await dm(MEMBER, "help")).content;
    expect(list).toContain("* `remind <minutes> <text...> [--loud]`: remind you in a few minutes");
    expect(list).toContain("* `stats`: what happened (moderators, administrators and owners)");
    const one = (await dm(MEMBER, "help remind")).content;
    expect(one).toContain("* `<minutes>` (number): how many minutes");
    expect(one).toContain("Examples: `remind 5 tea`");
    expect(one).toContain("Also: `r`");
  });

  it("refuses politely by role and by group, naming who may run it", async () => {
    expect((await dm(MEMBER, "stats")).content).toBe(
      "Sorry, only moderators, administrators and owners may run `stats`.",
    );
    expect((await dm(MOD, "stats")).content).toBe("all quiet");
    expect((await dm(MOD, "triage")).content).toBe('Sorry, only members of "support" may run `triage`.');
    expect((await dm(MEMBER, "triage")).content).toBe("triaging, Mel Member");
  });
});

describe("ctx.prompt", () => {
  it("resolves with the sender's next message in the conversation, which reaches no other handler", async () => {
    expect((await inGeneral(MEMBER, "@**Helper** order 30000")).content).toBe("Which size?");
    // Someone else's message in the conversation is not the answer.
    bot.post(OWNER, { type: "stream", to: "general", topic: "chat", content: "hello all" });
    expect((await inGeneral(MEMBER, "@**Helper** large")).content).toBe("one large coffee");
    expect(bot.replies().map((m) => m.content)).toEqual(["Which size?", "one large coffee"]);
  });

  it("rejects with PROMPT_TIMEOUT when no answer comes in time", async () => {
    expect((await dm(MEMBER, "order 1000")).content).toBe("Which size?");
    const after = bot.replies().at(-1)!.id;
    expect((await bot.nextReply({ after })).content).toBe("no answer: PROMPT_TIMEOUT");
  });
});

describe("permission checks", () => {
  it("read roles and groups from caches the registration filled: no request per message", async () => {
    const register = sandbox.control.requests.find((r) => r.path === "/register" && r.email === bot.email);
    expect(register).toBeDefined();
    const before = sandbox.control.requests.length;
    for (const [from, text] of [
      [MEMBER, "stats"],
      [MOD, "stats"],
      [MEMBER, "triage"],
      [MOD, "triage"],
      [OWNER, "whoami"],
    ] as const) {
      await dm(from, text);
    }
    const made = sandbox.control.requests
      .slice(before)
      .filter((r) => r.email === bot.email && r.path !== "/events")
      .map((r) => `${r.method} ${r.path}`);
    expect(made).toEqual(Array(5).fill("POST /messages"));
  });

  it("follow group membership changes from user_group events", async () => {
    expect((await dm(MOD, "triage")).content).toMatch(/^Sorry/);
    const groups = (await (
      await fetch(`${sandbox.url}/api/v1/user_groups`, { headers: { authorization: auth(OWNER) } })
    ).json()) as { user_groups: { id: number; name: string }[] };
    const support = groups.user_groups.find((g) => g.name === "support")!.id;
    const added = await fetch(`${sandbox.url}/api/v1/user_groups/${support}/members`, {
      method: "POST",
      headers: { authorization: auth(OWNER), "content-type": "application/x-www-form-urlencoded" },
      body: `add=${encodeURIComponent(JSON.stringify([sandbox.control.users().find((u) => u.email === MOD)!.user_id]))}`,
    });
    expect(added.status).toBe(200);
    // The membership event reaches the bot's queue before the next message does.
    expect((await dm(MOD, "triage")).content).toBe("triaging, Moe Moderator");
  });

  it("follow role changes from realm_user events", async () => {
    expect((await dm(MEMBER, "stats")).content).toMatch(/^Sorry/);
    sandbox.control.updateUser(MEMBER, { role: "moderator" });
    expect((await dm(MEMBER, "stats")).content).toBe("all quiet");
    expect((await dm(MEMBER, "whoami")).content).toBe("Mel Member (moderator)");
  });
});

function auth(email: string): string {
  return `Basic ${Buffer.from(`${email}:${sandbox.control.apiKeyOf(email)}`).toString("base64")}`;
}

describe("a command prefix from the bot's config", () => {
  it("runs commands in channels without a mention, and leaves noise alone", async () => {
    await bot.stop();
    bot = await runBot(sandbox, {
      bot: helper,
      name: "helper",
      email: "helper-bot@sandbox.example",
      config: 'command_prefix: "!"',
    });
    expect((await inGeneral(MEMBER, "!remind 2 tea")).content).toBe("in 2 min: tea");
    bot.post(MEMBER, { type: "stream", to: "general", topic: "chat", content: "!!! wow" });
    bot.post(MEMBER, { type: "stream", to: "general", topic: "chat", content: "remind 2 tea" });
    expect((await inGeneral(MEMBER, "!remnid 2 tea")).content).toBe(
      "I don't know the command `!remnid`. Did you mean `!remind`? Say `!help` for the list.",
    );
    expect((await dm(MEMBER, "!whoami")).content).toBe("Mel Member (member)");
    expect(bot.replies()).toHaveLength(3);
  });
});
