/**
 * An inbound webhook's idempotency window, over real HTTP on the test clock: a keyed request's
 * sends, state writes and `ctx.external` calls are made once however late (within the window)
 * the sender retries it, after a failure or a success; past the window the key is forgotten and
 * a retry is handled as a new request.
 */
import { existsSync } from "node:fs";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { request } from "undici";
import { afterAll, describe, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { FileStore } from "../../src/state/file-store.ts";
import type { InProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { gatedBackend, StoreGate } from "../support/gated-store.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const BOT = "window-bot@sandbox.example";
const HOUR = 3_600_000;

const world = useSandbox({ bots: { [BOT]: "Window" } });

/** The tests' state folders, removed once every daemon stopped. */
const dirs: string[] = [];
const stateDir = async () => dirs[dirs.push(await mkdtemp(path.join(tmpdir(), "bothost-window-"))) - 1]!;
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

/**
 * The "ticket" webhook's handler: it sends, opens a ticket, counts in its state, and throws while
 * `failing` (or, while `hanging`, waits until its run is cut).
 */
function ticketBot(seen = { runs: 0, tickets: 0, failing: false, hanging: false }) {
  const definition = defineBot({
    setup(bot) {
      bot.webhook("ticket", { verify: { type: "none" }, idempotencyHeader: "X-Id" }, async (ctx) => {
        seen.runs++;
        const key = ctx.request.idempotencyKey;
        await ctx.send({ type: "channel", to: "general", topic: "hooks", content: `got ${key}` });
        const ticket = await ctx.external("open ticket", async () => ({ id: ++seen.tickets }));
        const handled = await ctx.state.update<number>("handled", (n) => (n ?? 0) + 1);
        if (seen.hanging) await new Promise((_, reject) => ctx.signal.addEventListener("abort", reject));
        if (seen.failing) throw new Error("broke after the send and the ticket");
        return { ticket: ticket.id, handled };
      });
    },
  });
  return { seen, definition };
}

/** `seen`: a first daemon's, for one started on its `stateDir` at `startMs`. */
async function started(
  extra?: string,
  again?: { seen: ReturnType<typeof ticketBot>["seen"]; stateDir: string; startMs: number },
  gate?: StoreGate,
) {
  const { seen, definition } = ticketBot(again?.seen);
  const clock = new ManualClock(again?.startMs ?? Date.now());
  const dir = again?.stateDir ?? (await stateDir());
  const store = await FileStore.open(dir, { now: () => clock.now() });
  const running: InProcessDaemon = await world.daemon(
    { hooks: { email: BOT, definition, ...(extra ? { extra } : {}) } },
    {
      clock,
      global: "http:\n  listen: 127.0.0.1:0",
      stateDir: dir,
      store: gate ? gatedBackend(store, ["hooks", "webhooks"], gate) : store,
    },
  );
  const url = running.daemon.http!.url!;
  const post = async (id: string) => {
    const res = await request(`${url}/webhooks/hooks/ticket`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-id": id },
      body: "{}",
    });
    return { status: res.statusCode, body: await res.body.json() };
  };
  const sent = () => world.messagesFrom(BOT).map((m) => String(m.content));
  return { seen, clock, post, sent, running };
}

describe("a keyed request retried hours later", () => {
  it("after a failure: the retry 8 hours later sends nothing twice and calls the external once", async () => {
    const { seen, clock, post, sent } = await started();
    seen.failing = true;
    expect((await post("k-1")).status).toBe(500);
    expect([sent(), seen.tickets]).toEqual([["got k-1"], 1]);
    await clock.tick(8 * HOUR);
    seen.failing = false;
    expect(await post("k-1")).toEqual({ status: 200, body: { ticket: 1, handled: 1 } });
    expect([seen.runs, sent(), seen.tickets]).toEqual([2, ["got k-1"], 1]);
  });

  it("after a success: a repeat 2 days later is a duplicate, and runs nothing", async () => {
    const { seen, clock, post, sent } = await started();
    expect(await post("k-2")).toEqual({ status: 200, body: { ticket: 1, handled: 1 } });
    await clock.tick(48 * HOUR);
    expect(await post("k-2")).toEqual({ status: 200, body: { duplicate: true } });
    expect([seen.runs, sent(), seen.tickets]).toEqual([1, ["got k-2"], 1]);
    // Its state write was applied once: the next request counts the second.
    expect(await post("k-3")).toEqual({ status: 200, body: { ticket: 2, handled: 2 } });
  });

  it("after its process stopped mid-run: the retry 8 hours later, on a new process, sends nothing twice", async () => {
    const dir = await stateDir();
    const first = await started(undefined, {
      seen: { runs: 0, tickets: 0, failing: false, hanging: true },
      stateDir: dir,
      startMs: Date.now(),
    });
    const cut = first.post("k-5").catch(() => undefined);
    await expect.poll(() => first.seen.tickets).toBe(1);
    await first.running.stop({ deadlineMs: 0 });
    await cut;
    first.seen.hanging = false;
    const second = await started(undefined, {
      seen: first.seen,
      stateDir: dir,
      startMs: first.clock.now() + 8 * HOUR,
    });
    expect(await second.post("k-5")).toEqual({ status: 200, body: { ticket: 1, handled: 1 } });
    expect([second.seen.runs, second.sent(), second.seen.tickets]).toEqual([2, ["got k-5"], 1]);
  });

  it("answered, then killed at once: a new process on what the disk held then finds it handled", async () => {
    const dir = await stateDir();
    const seen = { runs: 0, tickets: 0, failing: false, hanging: false };
    const first = await started(undefined, { seen, stateDir: dir, startMs: Date.now() });
    expect(await first.post("k-8")).toEqual({ status: 200, body: { ticket: 1, handled: 1 } });
    // What a kill -9 leaves at the answer: the state files as they are on disk then.
    const left = await stateDir();
    for (const name of ["state.json", "state.log"])
      if (existsSync(path.join(dir, name))) await cp(path.join(dir, name), path.join(left, name));
    const second = await started(undefined, { seen, stateDir: left, startMs: first.clock.now() + 1_000 });
    expect(await second.post("k-8")).toEqual({ status: 200, body: { duplicate: true } });
    // Its state write was kept: the next request counts the second.
    expect(await second.post("k-9")).toEqual({ status: 200, body: { ticket: 2, handled: 2 } });
  });

  it("after its handled mark was refused (a store outage): the retry 8 hours later applies no state write twice", async () => {
    const gate = new StoreGate();
    const { seen, clock, post, sent } = await started(undefined, undefined, gate);
    gate.mode = "fail";
    expect((await post("k-6")).status).toBe(500);
    gate.open();
    await clock.tick(8 * HOUR);
    expect((await post("k-6")).status).toBe(200);
    expect([seen.runs, sent(), seen.tickets]).toEqual([2, ["got k-6"], 1]);
    // Its state write was applied by the first run alone: the next request counts the second.
    expect(await post("k-7")).toEqual({ status: 200, body: { ticket: 2, handled: 2 } });
  });

  it("past the window (webhooks.ticket.idempotency_window) the key is forgotten: the retry is a new request", async () => {
    const { seen, clock, post, sent } = await started("webhooks:\n  ticket: { idempotency_window: 2h }");
    seen.failing = true;
    expect((await post("k-4")).status).toBe(500);
    await clock.tick(HOUR);
    // Within the window: the first attempt's send and ticket are handed back.
    expect((await post("k-4")).status).toBe(500);
    expect([sent(), seen.tickets]).toEqual([["got k-4"], 1]);
    await clock.tick(3 * HOUR);
    seen.failing = false;
    expect(await post("k-4")).toEqual({ status: 200, body: { ticket: 2, handled: 1 } });
    expect([seen.runs, sent(), seen.tickets]).toEqual([3, ["got k-4", "got k-4"], 2]);
    // Handled now: its repeat within the window is a duplicate.
    await clock.tick(HOUR);
    expect(await post("k-4")).toEqual({ status: 200, body: { duplicate: true } });
  });
});

describe("the config's webhooks entries", () => {
  it("one naming no webhook of the module stops the bot's setup, naming it", async () => {
    const logs: Record<string, unknown>[] = [];
    const extra = "webhooks:\n  tickets: { idempotency_window: 1d }";
    const bots = { hooks: { email: BOT, definition: ticketBot().definition, extra } };
    await world.daemon(bots, { logs });
    const failed = logs.find((l) => l.msg === "bot failed to start") as { error: string };
    expect(failed.error).toBe(
      `bots.hooks.webhooks.tickets in the config names no webhook of the bot's module (it declares ticket). Did you mean "ticket"? Use the name given to bot.webhook(). [BOT_SETUP_INVALID]`,
    );
  });
});

describe("a request without the declared idempotencyHeader", () => {
  it("is handled without a key, and said once: the header's name, the names (never the values) the request has", async () => {
    const { definition } = ticketBot();
    const logs: Record<string, unknown>[] = [];
    const running = await world.daemon(
      { hooks: { email: BOT, definition } },
      { global: "http:\n  listen: 127.0.0.1:0", stateDir: await stateDir(), logs },
    );
    const url = running.daemon.http!.url!;
    // A misspelt name in the bot, or a sender that sends another: `X-Delivery` here, not `X-Id`.
    const post = async () =>
      (
        await request(`${url}/webhooks/hooks/ticket`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-delivery": "d-secret-value" },
          body: "{}",
        })
      ).statusCode;
    expect([await post(), await post()]).toEqual([200, 200]);
    const said = logs.filter((l) =>
      String(l.msg).startsWith("webhook request without its idempotencyHeader"),
    );
    expect(said).toMatchObject([{ level: 40, webhook: "ticket", header: "X-Id" }]);
    expect(said[0]!.headers).toContain("x-delivery");
    expect(JSON.stringify(said)).not.toContain("d-secret-value");
  });
});
