/**
 * The state knows which server it belongs to, tried with `bothost run` as a user runs it:
 * - an `init`-style project (embedded sandbox, state on disk) run, stopped and run again gets a
 *   new, empty sandbox: the bot starts afresh and books its announcement on the new sandbox;
 * - state recorded with one server, then used with another organization (at the same URL): the
 *   daemon exits 2 naming both, for the state on disk and in Redis.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { request } from "undici";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { assertBuilt, hasStackTrace, killAll, runCli, spawnCli } from "../support/cli.ts";
import { dropPrefix, noRedisMessage, redisReachable, redisUrl, uniquePrefix } from "../support/redis.ts";

const BOT = "hello-bot@sandbox.example";
const BOT_KEY = "HelloBotKey0123456789abcdefghijk";
const ANNOUNCEMENT = "Hello, everyone: a new week!";

const org = `realm: { name: Local, host: sandbox.example }
users:
  - { email: owner@sandbox.example, full_name: Olive Owner, role: owner }
bots:
  - { email: ${BOT}, full_name: Hello Bot, owner: owner@sandbox.example, api_key: ${BOT_KEY} }
channels:
  - { name: general, subscribers: [owner@sandbox.example, ${BOT}] }
`;

const bot = `export default {
  setup(bot) {
    bot.recurring("monday-hello", {
      cron: "0 9 * * MON",
      timezone: "UTC",
      to: "general",
      topic: "hello",
      content: ${JSON.stringify(ANNOUNCEMENT)},
    });
  },
};
`;

const cleanups: Array<() => Promise<unknown>> = [];
beforeAll(assertBuilt);
afterEach(async () => {
  await killAll();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function project(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-identity-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await writeFile(path.join(dir, "org.yaml"), org);
  await writeFile(path.join(dir, "hello.mjs"), bot);
  return dir;
}

/** The bot's pending scheduled messages, asked of the server over HTTP as the bot. */
async function scheduled(url: string): Promise<{ content: string; scheduled_delivery_timestamp: number }[]> {
  const auth = Buffer.from(`${BOT}:${BOT_KEY}`).toString("base64");
  const res = await request(`${url}/api/v1/scheduled_messages`, {
    headers: { authorization: `Basic ${auth}` },
    reset: true,
  });
  const body = (await res.body.json()) as {
    scheduled_messages: { content: string; scheduled_delivery_timestamp: number }[];
  };
  return body.scheduled_messages;
}

/** `bothost run` until the bot booked its announcement; resolves the sandbox URL and the process. */
async function runUntilBooked(config: string) {
  const daemon = spawnCli(["run", "--config", config]);
  const started = await daemon.waitForLog((l) => l.msg === "embedded sandbox started");
  await daemon.waitForLog((l) => l.msg === "booked the next occurrence");
  await daemon.waitForLog((l) => l.msg === "daemon started");
  return { daemon, url: String(started.url) };
}

describe("on the embedded sandbox", () => {
  it("a run on a new sandbox starts afresh and books the next occurrence there", async () => {
    const dir = await project();
    const config = path.join(dir, "bothost.yaml");
    await writeFile(
      config,
      `server:\n  url: sandbox\n  sandbox:\n    org: ./org.yaml\nstate:\n  path: ${path.join(dir, ".bothost")}\n` +
        `log:\n  level: info\n  pretty: false\nbots:\n  hello:\n    module: ./hello.mjs\n    email: ${BOT}\n`,
    );

    const first = await runUntilBooked(config);
    const booked = await scheduled(first.url);
    expect(booked.map((m) => m.content)).toEqual([ANNOUNCEMENT]);
    first.daemon.kill("SIGTERM");
    expect(await first.daemon.exited).toEqual({ code: 0, signal: null });

    // The same project started again: its embedded sandbox is a new, empty one.
    const second = await runUntilBooked(config);
    // The same, next occurrence: not skipped as if its booking had been cancelled.
    expect(await scheduled(second.url)).toEqual(booked);
    const fresh = second.daemon
      .logs()
      .filter((l) => String(l.msg).startsWith("state was from another sandbox"));
    expect(fresh).toHaveLength(1);
    expect(fresh[0]).toMatchObject({ level: 30, bot: "hello" });
    expect(second.daemon.logs().filter((l) => String(l.msg).startsWith("booking cancelled"))).toEqual([]);
    second.daemon.kill("SIGTERM");
    expect(await second.daemon.exited).toEqual({ code: 0, signal: null });

    // A third run on yet another sandbox: the identity recorded by the second run is replaced again.
    const third = await runUntilBooked(config);
    expect(third.daemon.logs().some((l) => String(l.msg).startsWith("state was from another sandbox"))).toBe(
      true,
    );
    third.daemon.kill("SIGTERM");
    expect(await third.daemon.exited).toEqual({ code: 0, signal: null });
    // Three daemons started cold one after another: about 10 s on an idle machine, twice that on a busy one.
  }, 45_000);
});

/** A server of its own (not the embedded one): the config names its URL, as for a real server. */
async function server(port = 0): Promise<Sandbox> {
  const sandbox = await startSandbox({ org: serverOrg(), port, heartbeatSeconds: 1 });
  cleanups.push(() => sandbox.stop());
  return sandbox;
}

function serverOrg() {
  return {
    realm: { name: "Local", host: "sandbox.example" },
    users: [{ email: "owner@sandbox.example", full_name: "Olive Owner", role: "owner" as const }],
    bots: [{ email: BOT, full_name: "Hello Bot", owner: "owner@sandbox.example", api_key: BOT_KEY }],
    channels: [{ name: "general", subscribers: ["owner@sandbox.example", BOT] }],
  };
}

async function realServerConfig(dir: string, url: string, state: string): Promise<string> {
  const file = path.join(dir, "bothost.yaml");
  await writeFile(
    file,
    `server:\n  url: ${url}\n${state}\nlog:\n  level: info\n  pretty: false\nshutdown_timeout: 5s\n` +
      `bots:\n  hello:\n    module: ./hello.mjs\n    email: ${BOT}\n    api_key: \${HELLO_KEY}\n`,
  );
  return file;
}

/**
 * Run against organization A, stop, then put organization B at the same URL and run again: exit
 * 2 naming both identities and the state's location, nothing booked on B, no queue left there.
 */
async function expectRefusedOnAnotherServer(state: string, where: RegExp): Promise<void> {
  const dir = await project();
  const a = await server();
  const config = await realServerConfig(dir, a.url, state);
  const env = { HELLO_KEY: BOT_KEY };
  const first = spawnCli(["run", "--config", config], { env });
  await first.waitForLog((l) => l.msg === "daemon started");
  expect(a.control.scheduled()).toHaveLength(1);
  first.kill("SIGTERM");
  expect(await first.exited).toEqual({ code: 0, signal: null });
  const port = Number(new URL(a.url).port);
  const uuidA = await realmUuid(a.url);
  await a.stop();

  const b = await server(port);
  expect(b.url).toBe(a.url);
  const uuidB = await realmUuid(b.url);
  expect(uuidB).not.toBe(uuidA);
  const refused = await runCli(["run", "--config", config], { env });
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain("[STATE_SERVER_MISMATCH]");
  expect(refused.stderr).toContain(`realm_uuid ${uuidA}`);
  expect(refused.stderr).toContain(`realm_uuid ${uuidB}`);
  expect(refused.stderr).toMatch(where);
  expect(hasStackTrace(refused.stderr)).toBe(false);
  expect(b.control.scheduled()).toEqual([]);
  expect(b.control.queues()).toEqual([]);
  expect(refused.stdout + refused.stderr).not.toContain(BOT_KEY);
}

/** The organization's id, as the server's POST /register reports it (the queue deleted again). */
async function realmUuid(url: string): Promise<string> {
  const headers = {
    authorization: `Basic ${Buffer.from(`${BOT}:${BOT_KEY}`).toString("base64")}`,
    "content-type": "application/x-www-form-urlencoded",
  };
  const form = new URLSearchParams({ event_types: '["heartbeat"]', fetch_event_types: '["realm"]' });
  const res = await request(`${url}/api/v1/register`, {
    method: "POST",
    headers,
    body: form.toString(),
    reset: true,
  });
  const body = (await res.body.json()) as { queue_id: string; realm_uuid: string };
  const del = await request(`${url}/api/v1/events?queue_id=${body.queue_id}`, {
    method: "DELETE",
    headers,
    reset: true,
  });
  await del.body.dump();
  expect(body.realm_uuid).toMatch(/^[0-9a-f-]{36}$/);
  return body.realm_uuid;
}

describe("on a real server", () => {
  it("refuses state recorded with another organization at the same URL: exit 2 naming both", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "bothost-identity-state-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await expectRefusedOnAnotherServer(`state:\n  path: ${dir}`, /state directory .*set state\.path/s);
  });

  it("does the same with the state in Redis", async (ctx) => {
    if (!(await redisReachable())) {
      console.info(noRedisMessage);
      ctx.skip();
    }
    const prefix = uniquePrefix("identity");
    cleanups.push(() => dropPrefix(prefix));
    await expectRefusedOnAnotherServer(
      `state:\n  redis: ${redisUrl}\n  prefix: ${prefix}`,
      new RegExp(`prefix "${prefix}".*"${prefix}:hello/\\*".*set state\\.prefix`, "s"),
    );
  });
});
