/**
 * `createBotTest({ org, users, clock })`: the sandbox starts from an org file or an inline org,
 * with the people a test adds (roles, groups), and one clock moves the sandbox and the bots, so a
 * reminder booked on the server is delivered by advancing it; a held clock stands still between
 * advances.
 */
import { defineBot } from "bothost";
import { runBot, TestClock } from "bothost/testing";
import { createBotTest, describe, expect } from "bothost/testing/vitest";
import { reminder } from "../support/reminder-bot.ts";

const MEMBER = "member@sandbox.example";

/** What GET /user_groups says a group holds, asked over HTTP as the org's owner. */
async function groupMembers(url: string, key: string, name: string): Promise<number[]> {
  const auth = Buffer.from(`owner@sandbox.example:${key}`).toString("base64");
  const res = await fetch(`${url}/api/v1/user_groups`, { headers: { authorization: `Basic ${auth}` } });
  const body = (await res.json()) as { user_groups: { name: string; members: number[] }[] };
  return body.user_groups.find((g) => g.name === name)?.members ?? [];
}

describe("extra people with roles and groups", () => {
  const test = createBotTest({
    users: [
      { email: "mia@sandbox.example", full_name: "Mia Mod", role: "moderator", groups: ["helpers"] },
      { email: "gus@sandbox.example", role: "guest", channels: [] },
    ],
  });

  test("are in the sandbox's org, with their role, group and channels", async ({ sandbox }) => {
    const { control, url } = sandbox;
    const mia = control.users().find((u) => u.email === "mia@sandbox.example")!;
    const gus = control.users().find((u) => u.email === "gus@sandbox.example")!;
    expect([mia.full_name, mia.role, gus.full_name, gus.role]).toEqual(["Mia Mod", 300, "gus", 600]);
    expect(await groupMembers(url, control.apiKeyOf("owner@sandbox.example"), "helpers")).toEqual([
      mia.user_id,
    ]);
    // Mia is in #general (the default), Gus in no channel.
    control.sendAs("mia@sandbox.example", { type: "stream", to: "general", topic: "t", content: "hi" });
    expect(() =>
      control.sendAs("gus@sandbox.example", { type: "stream", to: "general", topic: "t", content: "hi" }),
    ).toThrow();
  });
});

describe("an org file", () => {
  const test = createBotTest({ org: "bots/demo/org.yaml", users: [{ email: "new@demo.example" }] });

  test("is the sandbox's org, with the added people", async ({ sandbox }) => {
    const emails = sandbox.control.users().map((u) => u.email);
    expect(emails).toContain("new@demo.example");
    expect(emails).not.toContain(MEMBER);
    expect(emails.length).toBeGreaterThan(2);
  });
});

describe("an inline org", () => {
  const test = createBotTest({
    org: {
      users: [{ email: "ada@example.org", full_name: "Ada", role: "owner" }],
      channels: [{ name: "lab", subscribers: ["ada@example.org"] }],
    },
  });

  test("is the sandbox's org, and the bot joins it", async ({ sandbox, runBot }) => {
    const echo = defineBot({
      setup(bot) {
        bot.on("message", (ctx) => ctx.reply(ctx.event.message.content));
      },
    });
    const bot = await runBot({ bot: echo, name: "echo", channels: ["lab"] });
    const reply = await bot.ask("ada@example.org", { type: "direct", to: [bot.email], content: "hello" });
    expect(reply.content).toBe("hello");
    expect(sandbox.control.users().map((u) => u.email)).toEqual([
      "ada@example.org",
      "echo-bot@sandbox.example",
    ]);
  });
});

describe("the clock", () => {
  const test = createBotTest();

  test("delivers a reminder booked on the server when advanced past it", async ({
    runBot,
    clock,
    sandbox,
  }) => {
    const bot = await runBot({ bot: reminder, name: "reminder" });
    const id = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "remind me" });
    await bot.handled(id);
    // Its handler finished: all it sent is the acknowledgement; the reminder waits on the server.
    const botId = sandbox.control.users().find((u) => u.email === bot.email)?.user_id;
    const sent = sandbox.control.messages().filter((m) => m.sender_id === botId);
    expect(sent.map((m) => m.content)).toEqual(["I will remind you in 5 minutes."]);
    const ack = await bot.nextReply({ after: id });
    expect(sandbox.control.scheduled()).toMatchObject([{ content: "tea time", delivered: false }]);
    await clock.advance(6 * 60_000);
    const reminded = await bot.nextReply({ after: ack.id });
    expect(reminded.content).toBe("tea time");
  });

  // The server sends each scheduled message at its minute, and gives up on one more than 10
  // minutes late: one advance over hours delivers what came due on the way, as time passing would.
  test("an advance of hours delivers a reminder due on the way, not 10 minutes late", async ({
    runBot,
    clock,
    sandbox,
  }) => {
    const bot = await runBot({ bot: reminder, name: "reminder" });
    const ack = await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "remind me" });
    await clock.advance(3 * 3_600_000);
    expect((await bot.nextReply({ after: ack.id })).content).toBe("tea time");
    expect(sandbox.control.scheduled()).toMatchObject([
      { content: "tea time", delivered: true, failed: false },
    ]);
  });

  const monday = createBotTest({ clock: { start: "2030-01-07T08:59:30Z" } });
  monday(
    "starts where told: a recurring Monday 09:00 message goes out when the clock reaches it",
    async ({ runBot, clock }) => {
      const herald = defineBot({
        setup(bot) {
          bot.recurring("monday", {
            cron: "0 9 * * MON",
            timezone: "UTC",
            to: "general",
            topic: "week",
            content: "New week!",
          });
        },
      });
      const bot = await runBot({ bot: herald, name: "herald" });
      await clock.advanceTo("2030-01-07T09:01:00Z");
      const sent = await bot.nextReply();
      // Sent at its minute on the way, as the server's once-a-minute check does.
      expect([sent.content, sent.timestamp]).toEqual([
        "New week!",
        Date.parse("2030-01-07T09:00:00Z") / 1000,
      ]);
    },
  );

  const heldMonday = createBotTest({ clock: { start: "2030-01-07T07:00:00Z", held: true } });
  heldMonday(
    "an advance of days sends a daily announcement each day, as the days would",
    async ({ runBot, clock, sandbox }) => {
      const herald = defineBot({
        setup(bot) {
          bot.recurring("standup", {
            cron: "0 9 * * *",
            timezone: "Europe/Berlin",
            to: "general",
            topic: "standup",
            content: "Standup time!",
          });
        },
      });
      const bot = await runBot({ bot: herald, name: "herald" });
      await expect.poll(() => sandbox.control.scheduled()).toHaveLength(1);
      await clock.advanceTo("2030-01-10T07:30:00Z");
      // Each one booked when the one before went out: the bot stays up through the three days.
      expect(bot.replies().map((m) => [m.content, new Date(m.timestamp * 1000).toISOString()])).toEqual([
        ["Standup time!", "2030-01-07T08:00:00.000Z"],
        ["Standup time!", "2030-01-08T08:00:00.000Z"],
        ["Standup time!", "2030-01-09T08:00:00.000Z"],
      ]);
    },
  );

  heldMonday(
    "an advance of days runs a daily cron job each day, each run ended before the next",
    async ({ runBot, clock }) => {
      const digest = defineBot({
        setup(bot) {
          bot.cron("0 9 * * *", { timezone: "Europe/Berlin", id: "digest" }, async (ctx) => {
            const day = ctx.job.scheduledFor.toISOString().slice(0, 10);
            await ctx.send({ type: "channel", to: "general", topic: "digest", content: `digest ${day}` });
            await ctx.send({ type: "channel", to: "general", topic: "digest", content: `end ${day}` });
          });
        },
      });
      const bot = await runBot({ bot: digest, name: "digest" });
      await clock.advanceTo("2030-01-10T07:30:00Z");
      const at = (day: string) => Date.parse(`${day}T08:00:00Z`) / 1000;
      expect(bot.replies().map((m) => [m.content, m.timestamp])).toEqual(
        ["2030-01-07", "2030-01-08", "2030-01-09"].flatMap((day) => [
          [`digest ${day}`, at(day)],
          [`end ${day}`, at(day)],
        ]),
      );
    },
  );
});

describe("a held clock", () => {
  const test = createBotTest({ clock: { held: true } });
  // Works until it is stopped, then fails with the reason (as a fetch given the signal does).
  const slow = defineBot({
    setup(bot) {
      bot.on("message", { direct: true }, async (ctx) => {
        await new Promise((_, reject) =>
          ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)),
        );
      });
    },
  });

  test("stands still: a handler's time limit passes where the test moves the clock", async ({
    runBot,
    clock,
  }) => {
    const bot = await runBot({
      bot: slow,
      name: "slow",
      config: "handler_timeout: 5s\nretries: { attempts: 1 }",
    });
    const at = clock.now();
    const id = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "go" });
    await expect.poll(() => clock.pendingDelays()).toContain(5_000);
    // The handler has been running on the machine's time; on the clock, none of it has passed.
    expect(clock.now()).toBe(at);
    await clock.advance(4_999);
    expect(clock.pendingDelays()).toContain(1);
    await clock.advance(1);
    await expect(bot.handled(id)).rejects.toThrow(/dead letter/);
    expect(clock.now()).toBe(at + 5_000);
  });

  test("a stop cuts off the handlers still running (no grace period would pass)", async ({
    runBot,
    clock,
  }) => {
    const bot = await runBot({ bot: slow, name: "slow", config: "handler_timeout: 1h" });
    bot.post(MEMBER, { type: "direct", to: [bot.email], content: "go" });
    await expect.poll(() => clock.pendingDelays()).toContain(3_600_000);
    await bot.stop();
  });
});

describe("mistakes", () => {
  const test = createBotTest();

  test("an org file that does not load is named when the test file is read", () => {
    expect(() => createBotTest({ org: "test/testing/no-such-org.yaml" })).toThrow(
      /^Invalid sandbox org test\/testing\/no-such-org\.yaml:\n {2}- cannot read the file/,
    );
    expect(() => createBotTest({ users: [{ email: "x@sandbox.example", channels: ["lobby"] }] })).toThrow(
      'createBotTest: users[0].channels: the org has no channel "lobby"',
    );
  });

  test("an option, a person's field or a role misspelled is named when the test file is read", () => {
    const create = createBotTest as (options: unknown) => unknown;
    const invalid = (message: string) => expect.objectContaining({ code: "INVALID_ARGUMENT", message });
    const thrown = (options: unknown) => {
      try {
        create(options);
      } catch (err) {
        return err;
      }
      return "createBotTest took it";
    };
    expect(thrown({ orgs: "org.yaml" })).toEqual(
      invalid("createBotTest: orgs is not an option: did you mean org? (it takes org, users, clock)"),
    );
    expect(thrown({ clock: { hold: true } })).toEqual(
      invalid(
        "createBotTest: clock.hold is not an option of the clock: did you mean held? (it takes start, held)",
      ),
    );
    expect(thrown({ users: [{ email: "mia@sandbox.example", chanels: ["general"] }] })).toEqual(
      invalid(
        "createBotTest: users[0].chanels is not a field of a person: did you mean channels? (a person has email, full_name, role, groups, channels)",
      ),
    );
    expect(thrown({ users: [{ email: "mia@sandbox.example", role: "moderater" }] })).toEqual(
      invalid(
        'createBotTest: users[0].role must be one of owner, admin, moderator, member, guest, got the string "moderater": did you mean moderator?',
      ),
    );
    expect(thrown({ users: [{ email: "member@sandbox.example" }] })).toEqual(
      expect.objectContaining({
        message: "createBotTest: users[0].email: the org already has member@sandbox.example",
      }),
    );
    expect(thrown({ clock: { start: "soon" } })).toEqual(
      invalid("clock start: not a date: soon (give an ISO 8601 time, a Date or epoch ms)"),
    );
    // Not taken as truthy: the string "false" would hold the clock.
    expect(thrown({ clock: { held: "false" } })).toEqual(
      invalid('clock held: must be true or false, got the string "false"'),
    );
  });

  test("a clock the sandbox does not share is refused", async ({ sandbox }) => {
    const echo = defineBot({ setup: () => {} });
    const elsewhere = new TestClock({ start: "2030-01-01T00:00:00Z" });
    await expect(runBot(sandbox, { bot: echo, clock: elsewhere })).rejects.toThrow(
      "runBot: the clock is not the sandbox's; start the sandbox with startSandbox({ clock }) too",
    );
  });
});
