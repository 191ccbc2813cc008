import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { createClient } from "../../../src/api/create-client.ts";
import type { BotApi } from "../../../src/bot/bot-api.ts";
import { BotSetupError, createBotHandle } from "../../../src/bot/bot-handle.ts";
import type { BotDefinition } from "../../../src/bot/define-bot.ts";
import { SnippetError } from "../../../src/effects/snippets/snippet-cache.ts";
import { KV } from "../../../src/state/kv.ts";
import { MemoryStore } from "../../../src/state/memory-store.ts";
import { type BotDaemon, requestsSince, startBots } from "../../support/bot-daemon.ts";
import { ManualClock } from "../../support/manual-clock.ts";
import { useSandbox } from "../../support/sandbox-fixture.ts";

const BOT = "bot@sandbox.example";

const definition = (setup: (bot: BotApi) => void): BotDefinition => ({ setup }) as BotDefinition;
const tracking = definition((bot) => {
  bot.track("snippets");
  bot.on("message", () => {});
});

let running: BotDaemon | undefined;

const world = useSandbox({ heartbeatSeconds: 1 });

const writes = (from: number) =>
  requestsSince(world.sandbox, from).filter((r) => /^(POST|PATCH|DELETE) \/saved_snippets/.test(r));

describe("ctx.snippets", () => {
  it("ensure creates, then does nothing, then updates only when the content differs", async () => {
    running = world.stopAfter(
      await startBots(world.sandbox, { greeter: { email: BOT, definition: tracking } }),
    );
    const ctx = running.context();
    const first = await ctx.snippets.ensure(" Welcome ", "Hi, and welcome!");
    expect(first.action).toBe("created");
    expect(first.snippet).toMatchObject({ title: "Welcome", content: "Hi, and welcome!" });

    const mark = world.sandbox.control.requests.length;
    const again = await ctx.snippets.ensure("Welcome", "Hi, and welcome!\n");
    expect(again).toEqual({
      snippet: expect.objectContaining({ id: first.snippet.id }),
      action: "unchanged",
    });
    expect(requestsSince(world.sandbox, mark)).toEqual([]); // no POST, no PATCH, not even a GET

    const changed = await ctx.snippets.ensure("Welcome", "Hello!");
    expect(changed.action).toBe("updated");
    expect(writes(mark)).toEqual([`PATCH /saved_snippets/${first.snippet.id}`]);
    expect(await ctx.snippets.get("Welcome")).toMatchObject({ id: first.snippet.id, content: "Hello!" });
  });

  it("without bot.track, an ensure a minute later costs the list's one reload and no write", async () => {
    const clock = new ManualClock(Date.parse("2026-11-30T09:00:00Z"));
    const plain = definition((bot) => bot.on("message", () => {}));
    running = world.stopAfter(
      await startBots(world.sandbox, { greeter: { email: BOT, definition: plain } }, { clock }),
    );
    const ctx = running.context();
    await ctx.snippets.ensure("Welcome", "Hi");
    let mark = world.sandbox.control.requests.length;
    expect((await ctx.snippets.ensure("Welcome", "Hi")).action).toBe("unchanged");
    expect(requestsSince(world.sandbox, mark)).toEqual([]);
    await clock.tick(61_000);
    mark = world.sandbox.control.requests.length;
    expect((await ctx.snippets.ensure("Welcome", "Hi")).action).toBe("unchanged");
    expect(requestsSince(world.sandbox, mark)).toEqual(["GET /saved_snippets"]);
  });

  it("concurrent ensures of one title create one snippet", async () => {
    running = world.stopAfter(
      await startBots(world.sandbox, { greeter: { email: BOT, definition: tracking } }),
    );
    const ctx = running.context();
    const mark = world.sandbox.control.requests.length;
    const results = await Promise.all([1, 2, 3].map(() => ctx.snippets.ensure("Rules", "Be kind.")));
    expect(results.map((r) => r.action).sort()).toEqual(["created", "unchanged", "unchanged"]);
    expect(writes(mark)).toEqual(["POST /saved_snippets"]);
  });

  it("stays fresh from saved_snippets events made by another session, without reloading", async () => {
    running = world.stopAfter(
      await startBots(world.sandbox, { greeter: { email: BOT, definition: tracking } }),
    );
    expect(world.sandbox.control.queues().find((q) => q.email === BOT)?.event_types).toContain(
      "saved_snippets",
    );
    const ctx = running.context();
    expect(await ctx.snippets.list()).toEqual([]);
    const mark = world.sandbox.control.requests.length;

    const other = createClient({
      url: world.sandbox.url,
      email: BOT,
      apiKey: world.sandbox.control.apiKeyOf(BOT),
    });
    const { saved_snippet_id: id } = await other.savedSnippets.create({ title: "FAQ", content: "v1" });
    await expect.poll(() => ctx.snippets.get("FAQ")).toMatchObject({ id, content: "v1" });
    await other.savedSnippets.update(id, { content: "v2" });
    await expect.poll(async () => (await ctx.snippets.get("FAQ"))?.content).toBe("v2");
    await other.savedSnippets.delete(id);
    await expect.poll(() => ctx.snippets.get("FAQ")).toBeUndefined();

    const reads = requestsSince(world.sandbox, mark).filter(
      (r) => r.endsWith("/saved_snippets") && r.startsWith("GET"),
    );
    expect(reads).toEqual([]);
  });

  // The server stored the snippet and its answer was lost (a proxy's 502): the cache, loaded
  // before and not following events, must not take the snippet for missing.
  describe("a create whose answer was lost, without bot.track", () => {
    const lost = () =>
      world.sandbox.control.failNext(1, {
        status: 502,
        nonJson: true,
        after: true,
        paths: ["/saved_snippets"],
        methods: ["POST"],
      });
    const titled = (title: string) =>
      createClient({ url: world.sandbox.url, email: BOT, apiKey: world.sandbox.control.apiKeyOf(BOT) })
        .savedSnippets.list()
        .then((r) => r.saved_snippets.filter((x) => x.title === title));

    it("ensure called again finds it: one snippet", async () => {
      const plain = definition((bot) => bot.on("message", () => {}));
      running = world.stopAfter(
        await startBots(world.sandbox, { greeter: { email: BOT, definition: plain } }),
      );
      const ctx = running.context();
      await ctx.snippets.list();
      lost();
      await expect(ctx.snippets.ensure("FAQ", "Read the docs.")).rejects.toThrow();
      expect((await ctx.snippets.ensure("FAQ", "Read the docs.")).action).toBe("unchanged");
      expect(await titled("FAQ")).toHaveLength(1);
    });

    it("a handler's create, run again after the failure, creates no second snippet", async () => {
      const saver = definition((bot) =>
        bot.on("message", async (ctx) => {
          await ctx.snippets.list();
          await ctx.snippets.create("Note", ctx.event.message.content);
        }),
      );
      running = world.stopAfter(
        await startBots(world.sandbox, {
          greeter: { email: BOT, definition: saver, extra: "retries: { attempts: 3, backoff: 50ms }" },
        }),
      );
      await running.context().snippets.list();
      lost();
      world.sandbox.control.sendAs("member@sandbox.example", {
        type: "private",
        to: [BOT],
        content: "keep me",
      });
      await expect.poll(() => running!.daemon.bots[0]!.status.handled).toBe(1);
      expect(running.logged("handler failed")).not.toEqual([]);
      expect(await titled("Note")).toHaveLength(1);
    });
  });

  it("creates, lists, updates by title and deletes", async () => {
    running = world.stopAfter(
      await startBots(world.sandbox, { greeter: { email: BOT, definition: tracking } }),
    );
    const ctx = running.context();
    const a = await ctx.snippets.create("A", "alpha");
    const b = await ctx.snippets.create("B", "beta");
    expect((await ctx.snippets.list()).map((s) => s.title)).toEqual(["A", "B"]);
    const renamed = await ctx.snippets.update("A", { title: "A2", content: "alpha 2" });
    expect(renamed).toMatchObject({ id: a.id, title: "A2", content: "alpha 2" });
    expect(await ctx.snippets.get("A")).toBeUndefined();
    expect(await ctx.snippets.delete("B")).toBe(true);
    expect(await ctx.snippets.delete("B")).toBe(false);
    expect((await ctx.snippets.list()).map((s) => s.id)).toEqual([a.id]);
    expect(b.id).not.toBe(a.id);
  });

  it("a delete answered 429 is tried again after the wait, and deletes it (no error, not 'already gone')", async () => {
    running = world.stopAfter(
      await startBots(world.sandbox, { greeter: { email: BOT, definition: tracking } }),
    );
    const ctx = running.context();
    const made = await ctx.snippets.create("Rules", "be kind");
    const mark = world.sandbox.control.requests.length;
    world.sandbox.control.failNext(1, { status: 429, paths: [/saved_snippets\/\d+/] });
    expect(await ctx.snippets.delete("Rules")).toBe(true);
    expect(writes(mark)).toEqual([`DELETE /saved_snippets/${made.id}`, `DELETE /saved_snippets/${made.id}`]);
    expect(await ctx.snippets.list()).toEqual([]);
  });

  it("refuses blank or too long fields, and updates of missing titles, with the reason", async () => {
    running = world.stopAfter(
      await startBots(world.sandbox, { greeter: { email: BOT, definition: tracking } }),
    );
    const ctx = running.context();
    const mark = world.sandbox.control.requests.length;
    await expect(ctx.snippets.create("  ", "x")).rejects.toThrow(
      new SnippetError(
        "SNIPPET_INVALID",
        "Snippet title is blank; the server refuses blank titles.",
        "title",
      ),
    );
    await expect(ctx.snippets.ensure("t".repeat(61), "x")).rejects.toMatchObject({
      code: "SNIPPET_INVALID",
      field: "title",
      message: "Snippet title is 61 characters; the server allows at most 60. Shorten it.",
    });
    expect(requestsSince(world.sandbox, mark)).toEqual([]);
    await expect(ctx.snippets.update("Nope", { content: "x" })).rejects.toMatchObject({
      code: "SNIPPET_NOT_FOUND",
      message: 'No saved snippet titled "Nope"; create it first (or use ctx.snippets.ensure).',
    });
  });

  it("without bot.track the queue does not pay for snippet events, and the cache says how to enable them", async () => {
    const plain = definition((bot) => bot.on("message", () => {}));
    running = world.stopAfter(await startBots(world.sandbox, { greeter: { email: BOT, definition: plain } }));
    expect(world.sandbox.control.queues().find((q) => q.email === BOT)?.event_types).toEqual([
      "message",
      "restart",
    ]);
    const ctx = running.context();
    await ctx.snippets.ensure("Welcome", "Hi");
    await ctx.snippets.get("Welcome");
    const notes = running.logged("ctx.snippets: the queue does not receive");
    expect(notes).toHaveLength(1);
    expect(notes[0]!.msg).toContain('call bot.track("snippets") in setup');
  });

  it("bot.track rejects an unknown helper name, naming the known ones", () => {
    const handle = createBotHandle({
      name: "greeter",
      log: pino({ level: "silent" }),
      client: createClient({ url: world.sandbox.url, email: BOT, apiKey: "x".repeat(32) }),
      state: new KV(new MemoryStore()),
    });
    expect(() => handle.api.track("snipets" as never)).toThrow(
      new BotSetupError(
        'bot.track("snipets"): unknown helper; use "snippets", "users", "typing", "groups", "reactions".',
      ),
    );
    handle.api.track("users", "typing");
    expect([...handle.handledTypes]).toEqual(["realm_user", "typing"]);
  });
});

// Without bot.track the cache is reloaded only after a minute: a snippet deleted meanwhile by
// another session is still in it, and the server answers the PATCH with 404.
describe("a snippet deleted elsewhere while the untracked cache still holds it", () => {
  const deleteElsewhere = async (title: string) => {
    const other = createClient({
      url: world.sandbox.url,
      email: BOT,
      apiKey: world.sandbox.control.apiKeyOf(BOT),
    });
    const found = (await other.savedSnippets.list()).saved_snippets.find((s) => s.title === title);
    await other.savedSnippets.delete(found!.id);
  };
  const plain = definition((bot) => bot.on("message", () => {}));

  it("ensure creates it again instead of failing on the PATCH", async () => {
    running = world.stopAfter(await startBots(world.sandbox, { greeter: { email: BOT, definition: plain } }));
    const ctx = running.context();
    await ctx.snippets.ensure("Welcome", "Hi");
    await deleteElsewhere("Welcome");
    const again = await ctx.snippets.ensure("Welcome", "Hello");
    expect(again).toMatchObject({ action: "created", snippet: { title: "Welcome", content: "Hello" } });
    expect(await ctx.snippets.list()).toEqual([
      expect.objectContaining({ title: "Welcome", content: "Hello" }),
    ]);
  });

  it("an ensure of the same content is answered from the cache until the minute is over, then creates it", async () => {
    const clock = new ManualClock(Date.parse("2026-11-30T09:00:00Z"));
    running = world.stopAfter(
      await startBots(world.sandbox, { greeter: { email: BOT, definition: plain } }, { clock }),
    );
    const ctx = running.context();
    await ctx.snippets.ensure("Welcome", "Hi");
    await deleteElsewhere("Welcome");
    const mark = world.sandbox.control.requests.length;
    expect((await ctx.snippets.ensure("Welcome", "Hi")).action).toBe("unchanged");
    expect(requestsSince(world.sandbox, mark)).toEqual([]);
    await clock.tick(61_000);
    expect((await ctx.snippets.ensure("Welcome", "Hi")).action).toBe("created");
    expect(writes(mark)).toEqual(["POST /saved_snippets"]);
  });

  it("update fails with SNIPPET_NOT_FOUND naming the snippet, and the next read reloads", async () => {
    running = world.stopAfter(await startBots(world.sandbox, { greeter: { email: BOT, definition: plain } }));
    const ctx = running.context();
    await ctx.snippets.list(); // the cache is loaded, and keeps what the bot writes
    const made = await ctx.snippets.create("FAQ", "v1");
    await deleteElsewhere("FAQ");
    await expect(ctx.snippets.update("FAQ", { content: "v2" })).rejects.toMatchObject({
      code: "SNIPPET_NOT_FOUND",
      field: "title",
      message: `Saved snippet "FAQ" (id ${made.id}) no longer exists on the server: it was deleted elsewhere.`,
    });
    expect(await ctx.snippets.get("FAQ")).toBeUndefined();
  });
});
