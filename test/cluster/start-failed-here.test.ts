/**
 * A bot whose start fails on one instance of a cluster (its setup throws there: that instance's
 * environment lacks something) runs on another instance, whatever the order they started in:
 * - the instance where it failed gives its lease back and takes it no more, saying why;
 * - an instance at its share takes it anyway, and hands over a bot anyone can run instead;
 * - a reload with a new version of the bot lets the instance where it failed take it again.
 * Two real Daemons with LeaseCoordinators on Redis (skipped when none answers), bots on a sandbox
 * over HTTP.
 */
import { createHash } from "node:crypto";
import { Writable } from "node:stream";
import { Redis } from "ioredis";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import { LeaseCoordinator } from "../../src/cluster/lease-coordinator.ts";
import { dialogDesk } from "../../src/daemon/dialog-desk.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { RedisStore } from "../../src/state/redis-store.ts";
import { type InProcessDaemon, startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { dropPrefix, noRedisMessage, redisReachable, redisUrl, uniquePrefix } from "../support/redis.ts";

const reachable = await redisReachable();
if (!reachable) console.warn(`start failed here: ${noRedisMessage}`);

const MEMBER = "member@sandbox.example";
const GIVEN_BACK = "the bot failed to start here; its lease is given back for another instance to run it";
const MISSING = "LEDGER_DB is not set on this machine";
/** The status of the bot that failed here: what its setup threw, where, and who runs it. */
const FAILED_THERE = new RegExp(
  `^it failed to start: its code threw Error at \\S+:\\d+:\\d+: ${MISSING}; instance there runs it$`,
);

let sandbox: Sandbox;
let prefix: string;
let direct: Redis;
const cleanups: (() => Promise<unknown>)[] = [];

/** b0 answers "ping" in general with "pong from <instance>". */
function answering(instance: string) {
  return {
    events: ["message"],
    setup(bot: BotApi) {
      bot.on("message", async (ctx) => {
        if (ctx.event.message.content === "ping") await ctx.reply(`pong from ${instance}`);
      });
    },
  } as unknown as BotDefinition<never, never>;
}
const failing = {
  events: ["message"],
  setup() {
    throw new Error(MISSING);
  },
} as unknown as BotDefinition<never, never>;
const idle = { events: ["message"], setup() {} } as unknown as BotDefinition<never, never>;

beforeEach(async () => {
  prefix = uniquePrefix("failed-here");
  sandbox = await startSandbox({ heartbeatSeconds: 1 });
  for (const n of ["0", "1"])
    sandbox.control.createUser({
      email: `b${n}-bot@sandbox.example`,
      full_name: `Bot ${n}`,
      bot: "generic",
      owner: "owner@sandbox.example",
      channels: n === "0" ? ["general"] : [],
    });
  direct = new Redis(redisUrl);
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  direct.disconnect();
  await sandbox.stop();
  await dropPrefix(prefix);
});

/** An instance `id` running b0 (`b0`: its definition there) and b1, with leases of 1.5 s. */
async function instance(id: string, b0: BotDefinition<never, never>): Promise<Instance> {
  const store = await RedisStore.open({ url: redisUrl, prefix, commandTimeoutMs: 1_000 });
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n")) if (line) logs.push(JSON.parse(line));
      done();
    },
  });
  const coordinator = new LeaseCoordinator({
    store,
    bots: ["b0", "b1"],
    ttlMs: 1_500,
    handoverDeadlineMs: 500,
    log: pino({ level: "debug" }, sink),
    instanceId: id,
  });
  const d = await startInProcessDaemon(
    sandbox,
    {
      b0: { email: "b0-bot@sandbox.example", definition: b0 },
      b1: { email: "b1-bot@sandbox.example", definition: idle },
    },
    { store, coordinator, logs, global: "shutdown_timeout: 2s\nhttp:\n  listen: 127.0.0.1:0" },
  );
  cleanups.push(async () => {
    await d.stop({ deadlineMs: 0 });
    await store.close();
  });
  return Object.assign(d, { held: () => coordinator.held.sort() });
}

type Instance = InProcessDaemon & { held(): string[] };
const held = (d: Instance) => d.held();

/** The bot's answer to a "ping" the member sends now in general. */
async function pingAnswer(): Promise<string> {
  const { id } = sandbox.control.sendAs(MEMBER, {
    type: "stream",
    to: "general",
    topic: "t",
    content: "ping",
  });
  const bot = sandbox.control.users().find((u) => u.email === "b0-bot@sandbox.example")!.user_id;
  const answer = await sandbox.control.waitFor(
    () => sandbox.control.messages().find((m) => Number(m.id) > id && m.sender_id === bot),
    { timeoutMs: 15_000 },
  );
  return String(answer.content);
}

/** An instance id whose lease order lists b0 after b1: at its share, it hands b0 over first. */
function handsOverB0First(): string {
  const rank = (id: string, bot: string) => createHash("sha256").update(`${id}\n${bot}`).digest("hex");
  for (let i = 0; ; i++) if (rank(`there-${i}`, "b0") > rank(`there-${i}`, "b1")) return `there-${i}`;
}

describe.skipIf(!reachable)("a bot that fails to start on one instance of a cluster", () => {
  it("runs on the other instance, started after it; the first one says why and keeps its other bot", async () => {
    const here = await instance("here", failing);
    expect(here.report.failed.map((f) => f.name)).toEqual(["b0"]);
    await expect.poll(() => here.logged(GIVEN_BACK).map((l) => l.bot)).toEqual(["b0"]);
    expect(held(here)).toEqual(["b1"]);
    await expect.poll(() => direct.hget(`${prefix}#refusals`, "here")).toBe("b0");

    const there = await instance("there", answering("there"));
    await expect.poll(() => held(there), { timeout: 15_000 }).toEqual(["b0"]);
    expect(await pingAnswer()).toBe("pong from there");
    // Named by its holder once a round of this instance's has read who took it.
    const status = async () => (await here.daemon.status()).bots.find((b) => b.name === "b0");
    await expect.poll(status, { timeout: 15_000 }).toMatchObject({
      state: "failed",
      reason: expect.stringMatching(FAILED_THERE),
      leaseHolder: "there",
    });
    await expect.poll(() => held(here), { timeout: 15_000 }).toEqual(["b1"]);
    // The instance standing by for b1 names where its dialogs are listed.
    const desk = dialogDesk(there.daemon.bots, there.daemon.cluster);
    await expect
      .poll(() => desk.dialogs("b1"), { timeout: 15_000 })
      .toEqual([{ bot: "b1", dialogs: [], elsewhere: true, leaseHolder: "here" }]);
    // Its /readyz says 200 while `there` runs b0: a probe taking it out would take b1's webhooks
    // with it. Polled: on a loaded machine a lease of 1.5 s can lapse for a round, and b0 then
    // runs nowhere for a moment (503, rightly).
    const readyz = async () => {
      const ready = await fetch(`${here.daemon.http!.url}/readyz`);
      return { status: ready.status, bots: ((await ready.json()) as { bots: unknown[] }).bots };
    };
    await expect.poll(readyz, { timeout: 15_000 }).toMatchObject({
      status: 200,
      bots: expect.arrayContaining([
        { bot: "b0", state: "failed", ready: true, reason: expect.stringMatching(FAILED_THERE) },
      ]),
    });
  });

  it("an instance at its share that handed it over takes it back, and hands over its other bot", async () => {
    const id = handsOverB0First();
    const there = await instance(id, answering("there"));
    expect(held(there)).toEqual(["b0", "b1"]);
    // Joining, "here" is owed a bot: `there` hands b0 over (its order), whose start fails here.
    const here = await instance("here", failing);
    await expect.poll(() => here.logged(GIVEN_BACK).length, { timeout: 15_000 }).toBe(1);
    await expect.poll(() => [held(here), held(there)], { timeout: 15_000 }).toEqual([["b1"], ["b0"]]);
    expect(await pingAnswer()).toBe("pong from there");
  });

  it("a reload with a new version lets the instance where it failed run it again", async () => {
    const here = await instance("here", failing);
    const there = await instance("there", answering("there"));
    await expect.poll(() => held(there), { timeout: 15_000 }).toEqual(["b0"]);
    const fixed = [{ name: "b0", definition: answering("here"), settings: undefined }];
    const plan = { add: [], remove: [], restart: ["b0"], keep: ["b1"], needRestart: [] };
    expect((await here.daemon.applyReload(here.daemon.config, plan, fixed)).failed).toEqual([]);
    await expect.poll(() => direct.hget(`${prefix}#refusals`, "here"), { timeout: 15_000 }).toBeNull();
    // `there` stops cleanly: its leases are released, and "here" takes b0 now.
    await there.stop({ deadlineMs: 1_000 });
    await expect.poll(() => held(here), { timeout: 15_000 }).toEqual(["b0", "b1"]);
    expect(await pingAnswer()).toBe("pong from here");
  });
});
