/**
 * The command router's own costs and exactness, against the sandbox over HTTP: what a bot with
 * commands fetches at registration, how numbers are read, and the unknown-command reply; that
 * it never answers a bot (the sandbox's clock is moved to make the Notification Bot write).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createClient } from "../../../src/api/create-client.ts";
import { type BotDefinition, defineBot } from "../../../src/bot/define-bot.ts";
import { startSandbox } from "../../../src/sandbox/start-sandbox.ts";
import type { OrgInput, Sandbox } from "../../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../../src/testing/run-bot.ts";

const OWNER = "owner@sandbox.example";
const MEMBER = "member@sandbox.example";
const BOT = "calc-bot@sandbox.example";
const OTHER = "other-bot@sandbox.example";
const ORG: OrgInput = {
  realm: { name: "Sandbox", host: "sandbox.example" },
  users: [
    { email: OWNER, full_name: "Olive Owner", role: "owner" },
    { email: MEMBER, full_name: "Mel Member", role: "member" },
  ],
  bots: [
    { email: BOT, full_name: "Calc", type: "generic", owner: OWNER },
    { email: OTHER, full_name: "Other", type: "generic", owner: OWNER },
  ],
  channels: [{ name: "general", subscribers: [OWNER, MEMBER, BOT, OTHER], is_default: true }],
};

let sandbox: Sandbox;
let bot: TestBot | undefined;
beforeEach(async () => {
  sandbox = await startSandbox({ org: ORG });
});
afterEach(async () => {
  await bot?.stop();
  bot = undefined;
  await sandbox.stop();
});

// biome-ignore lint/suspicious/noExplicitAny: any bot definition
const start = async (module: BotDefinition<any>) => {
  bot = await runBot(sandbox, { bot: module as never, name: "calc", email: BOT });
  return bot;
};
const dm = (content: string) => bot!.ask(MEMBER, { type: "direct", to: [BOT], content });
const botCalls = () =>
  sandbox.control.requests
    .filter((r) => r.email === BOT && r.path !== "/events")
    .map((r) => `${r.method} ${r.path}`);
const queueTypes = () => sandbox.control.queues().find((q) => q.email === BOT)?.event_types;

describe("registration", () => {
  it("fetches no users for a bot whose commands check no role", async () => {
    await start(
      defineBot({
        setup(bot) {
          bot.command("ping", (ctx) => ctx.reply("pong"));
        },
      }),
    );
    expect((await dm("ping")).content).toBe("pong");
    // Without `realm_user` events the registration brings no user list; the bot asks for its own id.
    expect(queueTypes()).not.toContain("realm_user");
    expect(botCalls()).toContain("GET /users/me");
    expect(botCalls()).not.toContain("GET /users");
  });

  it("keeps the users cache (one fetch at registration) once a command checks a role", async () => {
    await start(
      defineBot({
        setup(bot) {
          bot.command("ping", (ctx) => ctx.reply("pong"));
          bot.command("stats", { allow: "moderator" }, (ctx) => ctx.reply("quiet"));
        },
      }),
    );
    expect((await dm("stats")).content).toBe(
      "Sorry, only moderators, administrators and owners may run `stats`.",
    );
    expect(queueTypes()).toContain("realm_user");
    expect(botCalls()).not.toContain("GET /users/me");
    expect(botCalls().filter((c) => c === "GET /users" || c.startsWith("GET /users/"))).toEqual([]);
  });
});

describe("numbers in arguments", () => {
  const calc = defineBot({
    setup(bot) {
      bot.command("big", { args: { n: z.bigint() } }, (ctx) => ctx.reply(`n=${ctx.args.n}`));
      bot.command("num", { args: { x: z.number() } }, (ctx) => ctx.reply(`x=${ctx.args.x}`));
      bot.command("count", { args: { k: z.number().int() } }, (ctx) => ctx.reply(`k=${ctx.args.k}`));
      bot.command("mins", { args: { m: z.number().int().min(1).max(1440) } }, (ctx) =>
        ctx.reply(`m=${ctx.args.m}`),
      );
    },
  });

  it("keeps every digit of a bigint", async () => {
    await start(calc);
    expect((await dm("big 12345678901234567891")).content).toBe("n=12345678901234567891");
    expect((await dm("big -98765432109876543210")).content).toBe("n=-98765432109876543210");
  });

  it("takes plain decimals and refuses hex, exponent and other notations with a usage error", async () => {
    await start(calc);
    expect((await dm("num 1.5")).content).toBe("x=1.5");
    expect((await dm("num -7")).content).toBe("x=-7");
    expect((await dm("num 0x10")).content).toBe(
      '`num`: <x>: expected a number, got "0x10" (write it in plain decimal digits, e.g. 16 or 1.5).\nUsage: `num <x>` (`help num` for more)',
    );
    expect((await dm("num 1e3")).content).toMatch(
      /^`num`: <x>: expected a number, got "1e3" \(write it in plain/,
    );
    expect((await dm("num Infinity")).content).toMatch(/^`num`: <x>: expected a number, got "Infinity"/);
    expect((await dm("big 0x10")).content).toMatch(
      /^`big`: <n>: expected a whole number, got "0x10" \(write it in plain decimal digits, e.g. 16\)\./,
    );
    expect((await dm("big 1.5")).content).toMatch(/^`big`: <n>: expected a whole number, got "1.5"\./);
    // A decimal is read as one; a schema that wants an integer refuses it.
    expect((await dm("count 1.5")).content).toMatch(/^`count`: <k>: expected a whole number, got "1.5"\./);
    expect((await dm("count 12")).content).toBe("k=12");
  });

  it("words a whole number past the safe range in plain words, by the schema's own bound when it has one", async () => {
    await start(calc);
    expect((await dm("mins 99999999999999999999")).content).toMatch(
      /^`mins`: <m>: expected at most 1440, got "99999999999999999999"\.\n/,
    );
    expect((await dm("count -99999999999999999999")).content).toMatch(
      /^`count`: <k>: expected at least -9007199254740991, got "-99999999999999999999"\.\n/,
    );
  });
});

describe("an unknown command", () => {
  it("is answered only when nothing took it, whatever was added to the bot after its first event", async () => {
    let late = false;
    await start(
      defineBot({
        setup(bot) {
          bot.command("ping", (ctx) => {
            // A handler added once events flow, after the router: it takes every message.
            if (!late) bot.on("message", (c) => c.reply(`taken: ${c.event.message.content}`));
            late = true;
            return ctx.reply("pong");
          });
        },
      }),
    );
    expect((await dm("ping")).content).toBe("pong");
    expect((await dm("dance")).content).toBe("taken: dance");
    expect((await dm("ping")).content).toBe("pong");
    expect(bot!.replies().map((m) => m.content)).toEqual(["pong", "taken: dance", "pong"]);
  });
});

/** The bot schedules a message and the sandbox's clock passes its time by 11 minutes: the send fails. */
async function failedScheduledNote(): Promise<number> {
  const client = createClient({
    url: sandbox.url,
    email: BOT,
    apiKey: sandbox.control.apiKeyOf(BOT),
    retry: false,
  });
  const member = sandbox.control.users().find((u) => u.email === MEMBER)!;
  await client.scheduledMessages.create({
    type: "direct",
    to: [member.user_id],
    content: "later",
    scheduled_delivery_timestamp: Math.floor(sandbox.control.now() / 1000) + 60,
  });
  sandbox.control.advanceClock(12 * 60_000);
  const note = sandbox.control.messages().at(-1) as { id: number; sender_id: number; content: string };
  expect(note.content).toMatch(/^The message you scheduled for .* was not sent/);
  return note.id;
}

const ping = (seen: string[]) =>
  defineBot({
    setup(bot) {
      bot.command("ping", (ctx) => ctx.reply("pong"));
      bot.command("stats", { allow: "moderator" }, (ctx) => ctx.reply("quiet"));
      bot.on("message", { direct: false }, () => {});
      bot.on("message", (ctx) => {
        if (ctx.sender?.isBot) seen.push(`${ctx.sender.email}: ${ctx.text.split(" ")[0]}`);
      });
    },
  });

describe("messages from bots", () => {
  it("the Notification Bot's note on a failed send gets no answer (a queue without the users list)", async () => {
    const b = await start(
      defineBot({
        setup(bot) {
          bot.command("ping", (ctx) => ctx.reply("pong"));
        },
      }),
    );
    const note = await failedScheduledNote();
    await b.handled(note);
    expect(b.replies()).toEqual([]);
    // A person still gets the answer.
    expect((await b.ask(MEMBER, { type: "direct", to: [BOT], content: "pong" })).content).toMatch(
      /^I don't know the command `pong`/,
    );
  });

  it("no answer to a system or organization bot, whose messages reach the handlers after the commands", async () => {
    const seen: string[] = [];
    const b = await start(ping(seen));
    const note = await failedScheduledNote();
    await b.handled(note);
    // An unknown command, a refused one and a wrong usage, from a bot of the organization.
    for (const content of ["hello", "stats", "help a b c"]) {
      await b.handled(b.post(OTHER, { type: "direct", to: [BOT], content }));
    }
    // Said by a bot, a command's name is no command either.
    await b.handled(b.post(OTHER, { type: "direct", to: [BOT], content: "ping" }));
    expect(b.replies()).toEqual([]);
    expect(seen).toEqual([
      "notification-bot@zulip.com: The",
      `${OTHER}: hello`,
      `${OTHER}: stats`,
      `${OTHER}: help`,
      `${OTHER}: ping`,
    ]);
    expect((await b.ask(MEMBER, { type: "direct", to: [BOT], content: "ping" })).content).toBe("pong");
  });
});
