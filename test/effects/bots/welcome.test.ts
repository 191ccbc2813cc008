/**
 * The shipped welcome bot (bots/welcome.ts) against the sandbox: control.createUser emits the
 * realm_user add event a real server sends, and the bot answers with a direct message.
 * It imports "bothost", which resolves to dist/: run `npm run build` first (`npm test` does).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import welcome from "../../../bots/welcome.ts";
import { createClient } from "../../../src/api/create-client.ts";
import { type BotDaemon, startBots } from "../../support/bot-daemon.ts";
import { ManualClock } from "../../support/manual-clock.ts";
import { useSandbox } from "../../support/sandbox-fixture.ts";

const BOT = "bot@sandbox.example";
const OWNER = "owner@sandbox.example";

let running: BotDaemon | undefined;

const world = useSandbox({ heartbeatSeconds: 1 });

const start = async (settings: Record<string, unknown>) => {
  running = world.stopAfter(
    await startBots(world.sandbox, { welcome: { email: BOT, definition: welcome, settings } }),
  );
  return running;
};
const botId = () => world.idOf(BOT);
const greetings = () => world.messagesFrom(BOT).filter((m) => m.type === "private");
const greetingTo = (userId: number) =>
  greetings().find((m) => (m.dm_user_ids as number[]).includes(userId) && m.sender_id === botId());

describe("the welcome bot", () => {
  it("greets a new member with the saved snippet, and follows edits to the snippet", async () => {
    const asBot = createClient({
      url: world.sandbox.url,
      email: BOT,
      apiKey: world.sandbox.control.apiKeyOf(BOT),
    });
    const { saved_snippet_id: id } = await asBot.savedSnippets.create({
      title: "Welcome",
      content: "Hello {{name}} ({{mention}}), welcome!",
    });
    await start({ snippet: "Welcome", fallback: "Hi {{name}}" });
    const ada = world.sandbox.control.createUser({ email: "ada@sandbox.example", full_name: "Ada L" });
    await expect
      .poll(() => greetingTo(ada.user_id)?.content)
      .toBe(`Hello Ada L (@_**Ada L|${ada.user_id}**), welcome!`);

    // A snippet still in the old single-brace spelling is filled in, with one warning per text.
    await asBot.savedSnippets.update(id, { content: "Welcome, {name}. Version two." });
    const bob = world.sandbox.control.createUser({ email: "bob@sandbox.example", full_name: "Bob" });
    await expect.poll(() => greetingTo(bob.user_id)?.content).toBe("Welcome, Bob. Version two.");
    const cleo = world.sandbox.control.createUser({ email: "cleo@sandbox.example", full_name: "Cleo" });
    await expect.poll(() => greetingTo(cleo.user_id)?.content).toBe("Welcome, Cleo. Version two.");
    expect(running!.logged("uses the old placeholder spelling").map((l) => l.msg)).toEqual([
      'the snippet "Welcome" uses the old placeholder spelling: edit it to read {name} → {{name}}',
    ]);
    expect(
      world.sandbox.control.requests.filter((r) => r.method === "GET" && r.path === "/saved_snippets"),
    ).toHaveLength(1);
  });

  it("uses the fallback while the snippet is missing", async () => {
    await start({ snippet: "Welcome", fallback: "Hi {{name}}, glad you are here." });
    const cy = world.sandbox.control.createUser({ email: "cy@sandbox.example", full_name: "Cy" });
    await expect.poll(() => greetingTo(cy.user_id)?.content).toBe("Hi Cy, glad you are here.");
  });

  it("does not greet bots, or guests when told not to", async () => {
    await start({ fallback: "Hi {{name}}", greet_guests: false });
    const handled = () => running!.daemon.bots[0]!.status.handled;
    world.sandbox.control.createUser({
      email: "helper-bot@sandbox.example",
      full_name: "Helper",
      bot: "generic",
      owner: OWNER,
    });
    world.sandbox.control.createUser({ email: "guest@sandbox.example", full_name: "Gus", role: "guest" });
    const dee = world.sandbox.control.createUser({ email: "dee@sandbox.example", full_name: "Dee" });
    await expect.poll(() => greetingTo(dee.user_id)?.content).toBe("Hi Dee");
    // Dee's greeting is sent before her event's run is counted as handled.
    await expect.poll(handled).toBeGreaterThanOrEqual(3);
    expect(greetings()).toHaveLength(1);
  });

  it("refuses a fallback with an unknown or old-style placeholder, naming the fix", () => {
    const parse = (v: unknown) =>
      (welcome.settings as { safeParse(v: unknown): { error?: { issues: unknown[] } } }).safeParse(v);
    expect(parse({ fallback: "Hi {name}" }).error?.issues).toMatchObject([
      { path: ["fallback"], message: "uses {name}, the old placeholder spelling: write {{name}}" },
    ]);
    expect(parse({ fallback: "Hi {{nick}}" }).error?.issues).toMatchObject([
      { path: ["fallback"], message: "uses {{nick}}; the placeholders are {{name}}, {{mention}}" },
    ]);
  });

  it("greets each member once, even after a restart", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "bothost-welcome-"));
    const bots = { welcome: { email: BOT, definition: welcome, settings: { fallback: "Hi {{name}}" } } };
    try {
      running = world.stopAfter(await startBots(world.sandbox, bots, { stateDir }));
      const eve = world.sandbox.control.createUser({ email: "eve@sandbox.example", full_name: "Eve" });
      await expect.poll(() => greetings()).toHaveLength(1);
      await running.stop();
      running = world.stopAfter(await startBots(world.sandbox, bots, { stateDir }));
      // The same add event again (as after the account became visible again): no second greeting.
      await running.daemon.bots[0]!.deliver({
        id: -1,
        type: "realm_user",
        op: "add",
        person: { user_id: eve.user_id, full_name: "Eve", is_bot: false, is_active: true, role: 400 },
      });
      expect(greetings()).toHaveLength(1);
      expect(await running.context().state.get(`greeted:${eve.user_id}`)).toEqual(expect.any(Number));
    } finally {
      await running?.stop();
      running = undefined;
      await rm(stateDir, { recursive: true, force: true });
    }
  });

  it("at a start, greets who joined while no queue of it was reading, within catch_up_days, once", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "bothost-welcome-"));
    const bots = { welcome: { email: BOT, definition: welcome, settings: { fallback: "Hi {{name}}" } } };
    const control = world.sandbox.control;
    const names = () => greetings().map((m) => String(m.content));
    try {
      // Members there before the bot's first start are no newcomers.
      control.createUser({ email: "ada@sandbox.example", full_name: "Ada" });
      running = world.stopAfter(await startBots(world.sandbox, bots, { stateDir }));
      const since = () => running!.context().state.get("greeting-since");
      await expect.poll(since).toEqual(expect.any(Number));
      expect(names()).toEqual([]);
      // As if the bot had been deployed a month ago, and had greeted everyone there since.
      const state = running.context().state.immediate;
      await state.set("greeting-since", Date.now() - 30 * 86_400_000);
      for (const u of control.users()) await state.set(`greeted:${u.user_id}`, Date.now());
      await running.stop();
      control.expireQueue({ email: BOT }); // its queue gone: the add events below reach no queue
      const day = 86_400_000;
      control.createUser({ email: "bob@sandbox.example", full_name: "Bob" });
      control.createUser({
        email: "cy@sandbox.example",
        full_name: "Cy",
        date_joined: new Date(control.now() - 2 * day).toISOString(),
      });
      control.createUser({
        email: "old@sandbox.example",
        full_name: "Old",
        date_joined: new Date(control.now() - 10 * day).toISOString(),
      });
      running = world.stopAfter(await startBots(world.sandbox, bots, { stateDir }));
      await expect.poll(names).toEqual(expect.arrayContaining(["Hi Bob", "Hi Cy"]));
      await expect
        .poll(() => running!.logged("greeted a member who joined while the bot was down").length)
        .toBe(2);
      expect(names().sort()).toEqual(["Hi Bob", "Hi Cy"]);
      // One line per member greeted.
      expect(running.logged("greeted a new member")).toEqual([]);
      // Started again: nobody greeted twice.
      await running.stop();
      running = world.stopAfter(await startBots(world.sandbox, bots, { stateDir }));
      await expect.poll(since).toEqual(expect.any(Number));
      expect(names().sort()).toEqual(["Hi Bob", "Hi Cy"]);
    } finally {
      await running?.stop();
      running = undefined;
      await rm(stateDir, { recursive: true, force: true });
    }
  });
  it("logs a catch-up greeting the server failed with its code and status, no stack", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "bothost-welcome-"));
    const bots = { welcome: { email: BOT, definition: welcome, settings: { fallback: "Hi {{name}}" } } };
    const control = world.sandbox.control;
    try {
      running = world.stopAfter(await startBots(world.sandbox, bots, { stateDir }));
      await expect.poll(() => running!.context().state.get("greeting-since")).toEqual(expect.any(Number));
      const state = running.context().state.immediate;
      await state.set("greeting-since", Date.now() - 86_400_000);
      for (const u of control.users()) await state.set(`greeted:${u.user_id}`, Date.now());
      await running.stop();
      control.expireQueue({ email: BOT });
      control.createUser({ email: "dee@sandbox.example", full_name: "Dee" });
      control.failNext(1, { status: 503, paths: [/^\/messages$/], methods: ["POST"] });
      // The bot's clock, moved past the wait for the failed send's own message event.
      const clock = new ManualClock(Date.now());
      running = world.stopAfter(await startBots(world.sandbox, bots, { stateDir, clock }));
      await control.waitFor(() => control.requests.some((r) => r.path === "/messages" && r.status === 503));
      const failed = () => running!.logged("could not greet a member who joined while the bot was down");
      await expect
        .poll(async () => {
          await clock.tick(1_000);
          return failed().length;
        })
        .toBe(1);
      const [line] = failed();
      expect(line).toMatchObject({ level: 40, code: expect.any(String), status: 503 });
      expect(line).not.toHaveProperty("err");
      expect(running.logText()).not.toContain('"stack"');
      expect(greetings()).toEqual([]);
    } finally {
      await running?.stop();
      running = undefined;
      await rm(stateDir, { recursive: true, force: true });
    }
  });

  it("greeted counts the members greeted, not one whose greeting at a start failed", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "bothost-welcome-"));
    const bots = { welcome: { email: BOT, definition: welcome, settings: { fallback: "Hi {{name}}" } } };
    const control = world.sandbox.control;
    const count = async () => {
      const before = world.messagesFrom(BOT).length;
      control.sendAs(OWNER, { type: "direct", to: [BOT], content: "greeted" });
      await expect.poll(() => world.messagesFrom(BOT).length).toBe(before + 1);
      return world.messagesFrom(BOT).at(-1)!.content;
    };
    try {
      running = world.stopAfter(await startBots(world.sandbox, bots, { stateDir }));
      await expect.poll(() => running!.context().state.get("greeting-since")).toEqual(expect.any(Number));
      await running.stop();
      control.expireQueue({ email: BOT });
      control.createUser({ email: "dee@sandbox.example", full_name: "Dee" });
      control.failNext(1, { status: 400, paths: [/^\/messages$/], methods: ["POST"] });
      running = world.stopAfter(await startBots(world.sandbox, bots, { stateDir }));
      await expect
        .poll(() => running!.logged("could not greet a member who joined while the bot was down").length)
        .toBe(1);
      expect(await count()).toBe("0 members greeted so far.");
      // The next start greets her (none of its messages went out): counted from then on.
      await running.stop();
      running = world.stopAfter(await startBots(world.sandbox, bots, { stateDir }));
      await expect.poll(() => greetings().map((m) => m.content)).toContain("Hi Dee");
      expect(await count()).toBe("1 member greeted so far.");
    } finally {
      await running?.stop();
      running = undefined;
      await rm(stateDir, { recursive: true, force: true });
    }
  });

  it("catch_up_days 0 at the first start, then 7: who joined while it was down is greeted", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "bothost-welcome-"));
    const withDays = (catch_up_days: number) => ({
      welcome: { email: BOT, definition: welcome, settings: { fallback: "Hi {{name}}", catch_up_days } },
    });
    const control = world.sandbox.control;
    try {
      control.createUser({ email: "ada@sandbox.example", full_name: "Ada" });
      running = world.stopAfter(await startBots(world.sandbox, withDays(0), { stateDir }));
      await running.stop();
      control.expireQueue({ email: BOT });
      control.createUser({ email: "dee@sandbox.example", full_name: "Dee" });
      running = world.stopAfter(await startBots(world.sandbox, withDays(7), { stateDir }));
      await expect
        .poll(() => running!.logged("greeted a member who joined while the bot was down").length)
        .toBe(1);
      expect(greetings().map((m) => m.content)).toEqual(["Hi Dee"]);
    } finally {
      await running?.stop();
      running = undefined;
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});
