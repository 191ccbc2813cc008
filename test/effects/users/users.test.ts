import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "../../../src/api/create-client.ts";
import type { BotApi } from "../../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../../src/bot/define-bot.ts";
import { BotServices } from "../../../src/effects/bot-services.ts";
import { defaultOrg } from "../../../src/sandbox/org/default-org.ts";
import { startSandbox } from "../../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../../src/sandbox/types.ts";
import { MemoryStore } from "../../../src/state/memory-store.ts";
import { type BotDaemon, requestsSince, startBots } from "../../support/bot-daemon.ts";
import { ManualClock } from "../../support/manual-clock.ts";

const BOT = "bot@sandbox.example";
const MEMBER = "member@sandbox.example";
const OWNER = "owner@sandbox.example";

const definition = (track: boolean) =>
  ({
    setup(bot: BotApi) {
      if (track) bot.track("users");
      bot.on("message", () => {});
    },
  }) as BotDefinition;

let sandbox: Sandbox | undefined;
let running: BotDaemon | undefined;

afterEach(async () => {
  await running?.stop();
  running = undefined;
  await sandbox?.stop();
  sandbox = undefined;
});

async function start(track = true, org = defaultOrg()) {
  sandbox = await startSandbox({ heartbeatSeconds: 1, org });
  running = await startBots(sandbox, { people: { email: BOT, definition: definition(track) } });
  return { s: sandbox, ctx: running.context() };
}

const idOf = (s: Sandbox, email: string) => s.control.users().find((u) => u.email === email)!.user_id;
const userCalls = (s: Sandbox, from: number) =>
  requestsSince(s, from).filter((r) => r.startsWith("GET /users"));

describe("ctx.users lookups", () => {
  it("with tracking, knows every user from the registration: no request", async () => {
    const { s, ctx } = await start();
    const mark = s.control.requests.length;
    expect(await ctx.users.get(idOf(s, MEMBER))).toMatchObject({ full_name: "Mel Member", role: 400 });
    expect(await ctx.users.get(OWNER)).toMatchObject({ full_name: "Olive Owner", role: 100 });
    expect((await ctx.users.list()).map((u) => u.email).sort()).toEqual([BOT, MEMBER, OWNER].sort());
    expect(userCalls(s, mark)).toEqual([]);
  });

  it("finds a user by id, real email and placeholder email, asking the server once per user", async () => {
    const { s, ctx } = await start(false);
    const id = idOf(s, MEMBER);
    const mark = s.control.requests.length;
    const byId = await ctx.users.get(id);
    expect(byId).toMatchObject({ user_id: id, full_name: "Mel Member", email: MEMBER, role: 400 });
    expect(await ctx.users.get(MEMBER.toUpperCase())).toEqual(byId);
    expect(userCalls(s, mark)).toEqual([`GET /users/${id}`]);

    const owner = idOf(s, OWNER);
    expect(await ctx.users.get(`user${owner}@sandbox.example`)).toMatchObject({ user_id: owner });
    expect(await ctx.users.get(`user${owner}@sandbox.example`)).toMatchObject({ user_id: owner });
    // The first placeholder taught the cache the realm host: the next one needs no request.
    expect(await ctx.users.get(`user${id}@sandbox.example`)).toEqual(byId);
    expect(userCalls(s, mark)).toEqual([`GET /users/${id}`, `GET /users/user${owner}%40sandbox.example`]);
  });

  it("answers undefined for an unknown user and for a real email the bot may not see", async () => {
    const org = defaultOrg();
    org.realm = { ...org.realm, email_address_visibility: "admins" };
    const { s, ctx } = await start(true, org);
    expect(await ctx.users.get(99_999)).toBeUndefined();
    expect(await ctx.users.get("nobody@sandbox.example")).toBeUndefined();
    expect(await ctx.users.get(MEMBER)).toBeUndefined(); // hidden from a member-role bot
    const id = idOf(s, MEMBER);
    expect(await ctx.users.get(`user${id}@sandbox.example`)).toMatchObject({
      user_id: id,
      email: `user${id}@sandbox.example`,
      delivery_email: null,
    });
  });

  it("list() returns everyone, once", async () => {
    const { s, ctx } = await start(false);
    const mark = s.control.requests.length;
    const all = await ctx.users.list();
    expect(all.map((u) => u.email).sort()).toEqual([BOT, MEMBER, OWNER].sort());
    await ctx.users.list();
    await ctx.users.get(idOf(s, OWNER));
    expect(userCalls(s, mark)).toEqual(["GET /users"]);
  });
});

describe("ctx.users freshness", () => {
  it("follows realm_user events: new users, deactivation, role and name changes, without re-fetching", async () => {
    const { s, ctx } = await start();
    const memberId = idOf(s, MEMBER);
    await ctx.users.list();
    const mark = s.control.requests.length;

    const newcomer = s.control.createUser({ email: "new@sandbox.example", full_name: "Nia New" });
    await expect.poll(async () => (await ctx.users.list()).map((u) => u.user_id)).toContain(newcomer.user_id);
    expect(await ctx.users.get("new@sandbox.example")).toMatchObject({
      full_name: "Nia New",
      is_active: true,
    });

    s.control.setActive(MEMBER, false);
    await expect.poll(async () => (await ctx.users.get(memberId))?.is_active).toBe(false);
    s.control.updateUser(OWNER, { full_name: "Olive O." });
    s.control.updateUser("new@sandbox.example", { role: "admin" });
    await expect.poll(async () => (await ctx.users.get(newcomer.user_id))?.role).toBe(200);
    expect(await ctx.users.get(newcomer.user_id)).toMatchObject({
      is_admin: true,
      is_owner: false,
      is_guest: false,
    });
    expect((await ctx.users.get(OWNER))?.full_name).toBe("Olive O.");
    expect(userCalls(s, mark)).toEqual([]);
  });

  it("takes everyone afresh from a new queue's registration (events may have been missed)", async () => {
    const { s, ctx } = await start();
    const id = idOf(s, MEMBER);
    expect((await ctx.users.get(id))?.role).toBe(400);
    const mark = s.control.requests.length;
    s.control.expireQueue({ email: BOT });
    // Changed while no queue listened: only the next registration can tell.
    s.control.updateUser(MEMBER, { role: "moderator" });
    await expect.poll(() => running!.daemon.bots[0]!.status.registrations).toBe(2);
    expect((await ctx.users.get(id))?.role).toBe(300);
    expect(userCalls(s, mark)).toEqual([]);
  });

  it("without tracking, re-fetches entries older than a minute and says how to track", async () => {
    sandbox = await startSandbox({ heartbeatSeconds: 1 });
    const s = sandbox;
    const clock = new ManualClock(Date.now());
    const logs: string[] = [];
    const log = pino({ level: "info" }, { write: (line: string) => void logs.push(JSON.parse(line).msg) });
    const client = createClient({ url: s.url, email: BOT, apiKey: s.control.apiKeyOf(BOT) });
    const { users: cache } = new BotServices({
      name: "b",
      client,
      store: new MemoryStore(),
      log,
      receives: () => false,
      clock,
    });
    const id = idOf(s, MEMBER);
    const mark = s.control.requests.length;
    await cache.get(id);
    await clock.tick(59_999);
    await cache.get(id);
    expect(userCalls(s, mark)).toHaveLength(1);
    await clock.tick(1);
    s.control.updateUser(MEMBER, { full_name: "Mel M." });
    expect((await cache.get(id))?.full_name).toBe("Mel M.");
    expect(userCalls(s, mark)).toHaveLength(2);
    expect(logs.filter((m) => m.includes('call bot.track("users") in setup'))).toHaveLength(1);
  });
});
