/**
 * The shipped announcements bot (bots/announcements.ts). It imports "bothost", which resolves to
 * dist/: run `npm run build` first (`npm test` does).
 */
import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { definition, rules, settings } from "../support/announcements-bot.ts";
import { problemsLoading } from "../support/load-problems.ts";
import { BOT, createWorld, iso, MEMBER, type SchedulerWorld } from "../support/scheduler-harness.ts";

let world: SchedulerWorld;
afterEach(() => world?.dispose());

const standup = {
  id: "standup",
  cron: "0 9 * * 1-5",
  timezone: "Europe/Berlin",
  channel: "general",
  topic: "standup",
  content: "Standup in 5 minutes :coffee:",
};

describe("the announcements bot", () => {
  it("books each announcement; a snippet's text is read when its occurrence is booked", async () => {
    world = await createWorld("2026-03-02T07:00:00Z"); // a Monday
    const client = world.botClient();
    const { saved_snippet_id } = await client.savedSnippets.create({
      title: "House rules",
      content: "Be kind.",
    });
    await world.start(definition, settings([standup, rules]));
    const view = () => world.pending().map((s) => [s.topic, iso(s.scheduled_delivery_timestamp), s.content]);
    expect(view()).toEqual([
      ["standup", "2026-03-02T08:00:00.000Z", "Standup in 5 minutes :coffee:"],
      ["house rules", "2026-03-02T15:00:00.000Z", "Be kind."],
    ]);
    await client.savedSnippets.update(saved_snippet_id, { content: "Be kind, always." });
    await world.advanceTo("2026-03-02T08:00:00Z");
    await expect.poll(() => world.sent()).toHaveLength(1);
    // The queue expires while the clock moves hours ahead; the resync after the new queue reads the
    // snippet again (its cache has long expired) and updates the booking before it is due.
    await world.advanceTo("2026-03-02T14:50:00Z");
    await expect
      .poll(() => view().find(([topic]) => topic === "house rules"))
      .toEqual(["house rules", "2026-03-02T15:00:00.000Z", "Be kind, always."]);
    await world.advanceTo("2026-03-02T15:00:00Z");
    await expect.poll(view).toEqual([
      ["standup", "2026-03-03T08:00:00.000Z", "Standup in 5 minutes :coffee:"],
      ["house rules", "2026-03-09T14:00:00.000Z", "Be kind, always."], // 10:00 EDT after the change
    ]);
    expect(world.sent().map((m) => m.content)).toEqual(["Standup in 5 minutes :coffee:", "Be kind, always."]);
    // An edit while the bot is down reaches the booking at the next start.
    await world.stop();
    await client.savedSnippets.update(saved_snippet_id, { content: "Be kind. Be brief." });
    await world.start(definition, settings([standup, rules]));
    expect(view()[1]).toEqual(["house rules", "2026-03-09T14:00:00.000Z", "Be kind. Be brief."]);
  });

  it("next lists the coming occurrences on the bot's clock, in the announcement's time zone", async () => {
    world = await createWorld("2026-03-06T12:00:00Z"); // a Friday
    await world.start(definition, settings([standup]));
    world.sandbox.control.sendAs(MEMBER, { type: "direct", to: [BOT], content: "next 3 standup" });
    const berlin = (day: string) => `${day} Mar 2026, 09:00 Europe/Berlin`;
    await expect
      .poll(() => world.sent().map((m) => m.content))
      .toEqual([
        `* \`standup\` → #**general>standup**: ${berlin("Mon, 9")}; ${berlin("Tue, 10")}; ${berlin("Wed, 11")}`,
      ]);
  });

  it("next takes a first word that is no number as the id: `next standup`; a count out of range is refused with the usage", async () => {
    world = await createWorld("2026-03-06T12:00:00Z"); // a Friday
    await world.start(definition, settings([standup, { ...standup, id: "retro", cron: "0 16 * * FRI" }]));
    const ask = async (content: string, replies: number) => {
      world.sandbox.control.sendAs(MEMBER, { type: "direct", to: [BOT], content });
      await expect.poll(() => world.sent()).toHaveLength(replies);
      return world.sent().at(-1)!.content;
    };
    expect(await ask("next standup", 1)).toBe(
      "* `standup` → #**general>standup**: Mon, 9 Mar 2026, 09:00 Europe/Berlin",
    );
    expect(await ask("next 11 standup", 2)).toBe(
      '`next`: <count> must be a whole number from 1 to 10, got "11".\nUsage: `next [count] [id]` or `next [id]`, e.g. `next 3 standup`, `next standup`.',
    );
    expect(await ask("next standup retro", 3)).toContain(
      '`next`: give one announcement\'s id, after the count if any; got "standup" and "retro".',
    );
  });

  it("next names each occurrence's own topic when the topic is dated", async () => {
    world = await createWorld("2026-03-06T12:00:00Z"); // a Friday
    await world.start(definition, settings([{ ...standup, topic: "standup {{weekday}} {{date}}" }]));
    world.sandbox.control.sendAs(MEMBER, { type: "direct", to: [BOT], content: "next 2 standup" });
    await expect
      .poll(() => world.sent().map((m) => m.content))
      .toEqual([
        "* `standup` → #**general>standup Monday 2026-03-09** Mon, 9 Mar 2026, 09:00 Europe/Berlin; " +
          "#**general>standup Tuesday 2026-03-10** Tue, 10 Mar 2026, 09:00 Europe/Berlin",
      ]);
  });

  it("a missing snippet is the config's mistake: one warning naming the announcement and the title, no stack, tried again every 30 minutes; the others are booked", async () => {
    world = await createWorld("2026-03-02T07:00:00Z");
    const runtime = await world.start(definition, settings([standup, rules]));
    expect(world.pending().map((s) => s.topic)).toEqual(["standup"]);
    expect(runtime.scheduler.stats.bookingErrors).toBe(1);
    const SAID =
      'announcement "rules" cannot be booked: the bot has no saved snippet titled "House rules"; create it as the bot\'s account or fix the title. Tried again every 30 minutes, and at each start.';
    const said = () => world.logs.filter((l) => l.msg === SAID && l.level === 40);
    expect(said()).toEqual([
      expect.objectContaining({ level: 40, announcement: "rules", code: "SNIPPET_NOT_FOUND" }),
    ]);
    expect(said()[0]).not.toHaveProperty("err");
    expect(world.logs.filter((l) => (l.level as number) >= 50)).toEqual([]);
    // No retry within the half hour; the one after it fails the same way, said at debug only.
    await world.advanceTo("2026-03-02T07:29:00Z");
    expect(runtime.scheduler.stats.bookingErrors).toBe(1);
    await world.advanceTo("2026-03-02T07:31:00Z");
    await expect.poll(() => runtime.scheduler.stats.bookingErrors).toBe(2);
    expect(said()).toHaveLength(1);
    expect(world.logs.filter((l) => l.msg === SAID)).toHaveLength(2);
    // The snippet made: the next check books it.
    await world.botClient().savedSnippets.create({ title: "House rules", content: "Be kind." });
    await world.advanceTo("2026-03-02T08:02:00Z");
    await expect.poll(() => world.pending().map((s) => s.topic)).toContain("house rules");
  });

  it.each([
    ["from the queue", 86_400],
    ["replayed after a new queue (the jump outlived it)", undefined],
  ])(
    "the server's reason for each failed send is logged once (%s); the Notification Bot gets no answer",
    async (_, queueTimeoutSeconds) => {
      world = await createWorld("2026-03-02T07:00:00Z", queueTimeoutSeconds ? { queueTimeoutSeconds } : {});
      const renewed = () =>
        world.logs.filter((l) => l.msg === "event queue expired on the server; registering a new one");
      const runtime = await world.start(definition, settings([standup]));
      const reasons = () =>
        world.logs
          .filter((l) => l.msg === "the server's reason the announcement was not sent")
          .map((l) => `${l.announcement} ${l.occurrence}: ${l.reason}`);
      const { control } = world.sandbox;
      const outlived = queueTimeoutSeconds === undefined;
      // The bot's poll does not reach the server through the jump (its parked one cut, the next
      // held on the way): with no poll parked on it, the server collects the queue (NOTES §3.4).
      if (outlived) {
        control.delay(3_600_000, { paths: ["/events"] });
        control.restartQueues();
      }
      // 09:00 Berlin is 08:00 UTC; the server's first look is 11 minutes late: it fails the send.
      await world.advanceTo("2026-03-02T08:11:00Z");
      if (outlived) control.delay(0);
      await expect.poll(() => runtime.scheduler.stats.rescheduled).toBe(1);
      const late = "standup 2026-03-02T08:00:00.000Z: Message could not be sent at the scheduled time.";
      await expect.poll(reasons).toEqual([late]);
      // The server is down until the moved send is late too: it fails again and is dropped.
      await world.advanceTo("2026-03-02T08:30:00Z");
      await expect.poll(reasons).toEqual([late, late]);
      await expect
        .poll(() => world.pending().map((s) => iso(s.scheduled_delivery_timestamp)))
        .toEqual(["2026-03-03T08:00:00.000Z"]);
      expect(runtime.scheduler.stats).toMatchObject({ failed: 2, rescheduled: 1 });
      expect(world.sent()).toEqual([]);
      expect(renewed().length > 0).toBe(outlived);
    },
  );

  const HEAD =
    `server:\n  url: https://chat.example.org\nbots:\n  announce:\n    module: ${resolve("bots/announcements.ts")}\n` +
    "    email: a@chat.example.org\n    api_key: abc\n    settings:\n      announcements:\n";

  it("settings problems are reported at their config path", async () => {
    const problems = await problemsLoading(
      HEAD +
        '        - { id: standup, cron: "0 25 * * *", channel: team, topic: t, content: hi, snippet: x }\n' +
        '        - { id: standup, cron: "@daily", timezone: Mars/Olympus, channel: team, topic: t }\n',
    );
    expect(problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      'bots.announce.settings.announcements[0].cron: cron "0 25 * * *": hour 25 is out of range (0-23).',
      "bots.announce.settings.announcements[0].snippet: give either content (the message) or snippet (a saved snippet's title), not both",
      "bots.announce.settings.announcements[1]: give either content (the message) or snippet (a saved snippet's title), not both",
      'bots.announce.settings.announcements[1].id: the id "standup" is used twice',
      'bots.announce.settings.announcements[1].timezone: timezone "Mars/Olympus" is not a known IANA time zone; use a name like "Europe/Berlin", "America/New_York" or "UTC".',
    ]);
  });

  it("a wrong time zone hides no mistake of the same entry's cron", async () => {
    const problems = await problemsLoading(
      `${HEAD}        - { id: standup, cron: "0 25 * * *", timezone: Europe/Berlinn, channel: team, topic: t, content: hi }\n`,
    );
    expect(problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      'bots.announce.settings.announcements[0].cron: cron "0 25 * * *": hour 25 is out of range (0-23).',
      'bots.announce.settings.announcements[0].timezone: timezone "Europe/Berlinn" is not a known IANA time zone; did you mean "Europe/Berlin"?',
    ]);
  });

  it("a misspelt key of an announcement or of the settings is refused, with the key meant", async () => {
    const problems = await problemsLoading(
      HEAD +
        '        - { id: standup, cron: "0 9 * * 1-5", timezon: Europe/Berlin, channel: team, topic: t, content: hi }\n' +
        "      dry_run: true\n",
    );
    const lines = problems.map((p) => `${p.line}:${p.column} ${p.path}: ${p.message}`);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^10:\d+ bots\.announce\.settings\.announcements\[0\]\.timezon: .*"timezone"/);
    expect(lines[1]).toMatch(/^11:\d+ bots\.announce\.settings\.dry_run: /);
  });

  it("a field of the wrong type hides no other mistake of its entry", async () => {
    const problems = await problemsLoading(
      `${HEAD}        - id: standup\n          cron: 1-8\n          channel: team\n          topic: t\n          content: 5\n`,
    );
    expect(problems.map((p) => `${p.line} ${p.path}`)).toEqual([
      "11 bots.announce.settings.announcements[0].cron",
      "14 bots.announce.settings.announcements[0].content",
    ]);
  });
});
