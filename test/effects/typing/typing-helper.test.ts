/**
 * ctx.typing against real typing events from the sandbox. The state-table rows run on a
 * BotServices fed from a real queue of the bot's account, with a ManualClock for the expiry; the
 * last tests run the whole daemon (bot.track("typing") → queue → runtime → tracker).
 */
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Client, createClient } from "../../../src/api/create-client.ts";
import { serverInfoFrom } from "../../../src/api/server-info.ts";
import type { BotApi } from "../../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../../src/bot/define-bot.ts";
import { BotServices } from "../../../src/effects/bot-services.ts";
import type { ContextHelpers } from "../../../src/effects/context-helpers.ts";
import type { BaseContext } from "../../../src/pipeline/context.ts";
import { MemoryStore } from "../../../src/state/memory-store.ts";
import { type BotDaemon, startBots } from "../../support/bot-daemon.ts";
import { openQueue, type TestQueue } from "../../support/event-queue.ts";
import { ManualClock } from "../../support/manual-clock.ts";
import { useSandbox } from "../../support/sandbox-fixture.ts";

const BOT = "bot@sandbox.example";
const MEMBER = "member@sandbox.example";

let running: BotDaemon | undefined;

const world = useSandbox({ heartbeatSeconds: 1 });

const idOf = world.idOf;

/** The bot's helpers on a ManualClock, fed every event its real queue receives. */
async function manualServices() {
  const clock = new ManualClock(Date.now());
  const queue = await openQueue(world.sandbox, BOT, ["typing"]);
  const services = new BotServices({
    name: "typist",
    client: queue.client,
    store: new MemoryStore(),
    log: pino({ level: "silent" }),
    receives: () => true,
    clock,
  });
  const server = serverInfoFrom(queue.register);
  const selfId = queue.register.user_id!;
  services.onRegistered(server, { userId: selfId });
  const helpers = services.forContext({
    signal: new AbortController().signal,
    server,
    selfId,
    send: async () => ({ id: 0 }),
  });
  const feed = async () => {
    for (const event of await queue.drain()) services.observe(event as never);
  };
  return { clock, helpers, feed, services, server };
}

describe("ctx.typing.who: the typing state table, row by row", () => {
  let member: Client;
  let memberId: number;
  let botId: number;
  let t: Awaited<ReturnType<typeof manualServices>>;
  const dm = () => ({ users: [memberId] });
  const typeToBot = async (op: "start" | "stop") => {
    await member.typing.set({ op, type: "direct", to: [botId] });
    await t.feed();
  };

  beforeEach(async () => {
    member = createClient({
      url: world.sandbox.url,
      email: MEMBER,
      apiKey: world.sandbox.control.apiKeyOf(MEMBER),
    });
    memberId = idOf(MEMBER);
    botId = idOf(BOT);
    t = await manualServices();
  });
  afterEach(() => t.services.dispose());

  it("not displayed + start → displayed", async () => {
    expect(await t.helpers.typing.who(dm())).toEqual([]);
    await typeToBot("start");
    expect(await t.helpers.typing.who(dm())).toEqual([memberId]);
    expect(await t.helpers.typing.isTyping(memberId)).toBe(true);
    expect(await t.helpers.typing.isTyping(memberId, dm())).toBe(true);
  });

  it("displayed + start → displayed, and the expiry timer restarts", async () => {
    expect(t.server.typing.startedExpiryMs).toBe(45_000);
    await typeToBot("start");
    await t.clock.tick(40_000);
    await typeToBot("start");
    await t.clock.tick(40_000); // 80 s after the first start, 40 s after the second
    expect(await t.helpers.typing.who(dm())).toEqual([memberId]);
    await t.clock.tick(5_000);
    expect(await t.helpers.typing.who(dm())).toEqual([]);
  });

  it("displayed + stop → not displayed", async () => {
    await typeToBot("start");
    await typeToBot("stop");
    expect(await t.helpers.typing.who(dm())).toEqual([]);
    expect(await t.helpers.typing.isTyping(memberId)).toBe(false);
  });

  it("displayed + the expiry period passes with no new start → not displayed", async () => {
    await typeToBot("start");
    await t.clock.tick(44_999);
    expect(await t.helpers.typing.who(dm())).toEqual([memberId]);
    await t.clock.tick(1);
    expect(await t.helpers.typing.who(dm())).toEqual([]);
  });

  it("not displayed + stop → still not displayed", async () => {
    await typeToBot("stop");
    expect(await t.helpers.typing.who(dm())).toEqual([]);
  });

  it("channel typing: a conversation is the channel (id or name) and the topic, case-insensitively", async () => {
    const general = (
      await member.request<{ stream_id: number }>("GET", "/get_stream_id", { stream: "general" })
    ).stream_id;
    await member.typing.set({ op: "start", type: "channel", stream_id: general, topic: "Lunch" });
    await t.feed();
    expect(await t.helpers.typing.who({ channel: "general", topic: "lunch" })).toEqual([memberId]);
    expect(await t.helpers.typing.who({ channel: general, topic: "LUNCH" })).toEqual([memberId]);
    expect(await t.helpers.typing.who({ channel: "general", topic: "dinner" })).toEqual([]);
    expect(await t.helpers.typing.who(dm())).toEqual([]);
  });

  it("the bot's own typing never shows", async () => {
    await t.helpers.typing.during(dm(), async () => {
      await t.feed();
      expect(await t.helpers.typing.who(dm())).toEqual([]);
    });
  });
});

describe("ctx.typing.during", () => {
  it("sends start, repeats it every started-wait period, and sends stop when the work ends", async () => {
    const t = await manualServices();
    const watcher = await openQueue(world.sandbox, MEMBER, ["typing"]);
    const botId = idOf(BOT);
    const result = await t.helpers.typing.during({ users: [idOf(MEMBER)] }, async () => {
      await t.clock.tick(t.server.typing.startedWaitMs); // 30 s: a second start
      return "answer";
    });
    expect(result).toBe("answer");
    const seen = (await watcher.drain()).filter((e) => (e.sender as { user_id: number }).user_id === botId);
    expect(seen.map((e) => [e.op, e.message_type])).toEqual([
      ["start", "direct"],
      ["start", "direct"],
      ["stop", "direct"],
    ]);
    t.services.dispose();
  });

  it("types in a channel named by name, and sends stop even when the work throws", async () => {
    const t = await manualServices();
    const watcher = await openQueue(world.sandbox, MEMBER, ["typing"]);
    const seen: Awaited<ReturnType<TestQueue["drain"]>> = [];
    const collect = async () => {
      seen.push(...(await watcher.drain()));
      return seen.length;
    };
    await expect(
      t.helpers.typing.during({ channel: "general", topic: "deploys" }, async () => {
        await expect.poll(collect).toBe(1); // the start arrived
        throw new Error("lookup failed");
      }),
    ).rejects.toThrow("lookup failed");
    await collect();
    expect(seen.map((e) => [e.op, e.message_type, e.topic])).toEqual([
      ["start", "stream", "deploys"],
      ["stop", "stream", "deploys"],
    ]);
    t.services.dispose();
  });

  it("names a wrong conversation argument", async () => {
    const t = await manualServices();
    await expect(t.helpers.typing.during({ users: [] }, async () => 1)).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message:
        'ctx.typing.during(): give { channel: <id or name>, topic: "<topic>" } or { users: [<user id>, …] }, got {"users":[]}.',
    });
    t.services.dispose();
  });
});

describe("ctx.typing in the daemon", () => {
  const botDef = (track: boolean) =>
    ({
      setup(bot: BotApi) {
        if (track) bot.track("typing");
        bot.on("message", () => {});
      },
    }) as BotDefinition;
  const typing = (ctx: BaseContext<unknown>): ContextHelpers["typing"] => ctx.typing;

  it("bot.track('typing') subscribes the queue and the runtime feeds the tracker", async () => {
    running = world.stopAfter(
      await startBots(world.sandbox, { typist: { email: BOT, definition: botDef(true) } }),
    );
    expect(world.sandbox.control.queues().find((q) => q.email === BOT)?.event_types).toEqual([
      "typing",
      "message",
      "restart",
    ]);
    const member = createClient({
      url: world.sandbox.url,
      email: MEMBER,
      apiKey: world.sandbox.control.apiKeyOf(MEMBER),
    });
    const ctx = running.context();
    await member.typing.set({ op: "start", type: "direct", to: [idOf(BOT)] });
    await expect.poll(() => typing(ctx).who({ users: [idOf(MEMBER)] })).toEqual([idOf(MEMBER)]);
    await member.typing.set({ op: "stop", type: "direct", to: [idOf(BOT)] });
    await expect.poll(() => typing(ctx).who({ users: [idOf(MEMBER)] })).toEqual([]);
  });

  it("without tracking, who() sees nobody and warns once how to fix it", async () => {
    running = world.stopAfter(
      await startBots(world.sandbox, { typist: { email: BOT, definition: botDef(false) } }),
    );
    const ctx = running.context();
    expect(await typing(ctx).who({ users: [idOf(MEMBER)] })).toEqual([]);
    expect(await typing(ctx).isTyping(idOf(MEMBER))).toBe(false);
    const warnings = running.logged('the queue does not receive "typing" events');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toContain('call bot.track("typing") in setup');
  });
});
