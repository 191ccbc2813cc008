/**
 * Regression tests for delivery bugs found by the subprocess end-to-end suite, and the durability
 * of a completion before its conversation moves on:
 * - a message sent between the first-ever /register and the baseline lookup was taken as
 *   already handled (its id was at or below the baseline) and silently dropped;
 * - a graceful stop aborted every running handler's signal at once, so a handler that replied
 *   after the stop began lost its reply (and the message was still marked handled).
 */
import { cpSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import { loadConfig } from "../../src/config/load-config.ts";
import { Daemon } from "../../src/daemon/daemon.ts";
import { createLogger } from "../../src/log/create-logger.ts";
import { DeliveryLedger } from "../../src/pipeline/delivery-ledger.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { FileStore } from "../../src/state/file-store.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";
import type { StateBackend } from "../../src/state/state-store.ts";
import { type InProcessDaemon, startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { deferred } from "../support/deferred.ts";

const MEMBER = "member@sandbox.example";
const BOT = "edge-bot@sandbox.example";

let sandbox: Sandbox;
let harness: InProcessDaemon | undefined;

beforeEach(async () => {
  sandbox = await startSandbox({ heartbeatSeconds: 1 });
  sandbox.control.createUser({
    email: BOT,
    full_name: "Edge",
    bot: "generic",
    owner: "owner@sandbox.example",
    channels: ["general"],
  });
});

afterEach(async () => {
  await harness?.stop();
  harness = undefined;
  await daemon?.stop();
  daemon = undefined;
  await sandbox.stop();
});

const bot = (setup: (b: BotApi) => void) => ({ setup }) as unknown as BotDefinition<never, never>;

/**
 * A memory store with a slow, honest commit: the writes issued before a commit() call become
 * "durable" only when it resolves, and it resolves only once `later` does (an fsync that outlasts
 * what the daemon does meanwhile). It exposes the bot's durable delivery cursor, i.e. what a
 * restart after kill -9 would start from.
 */
class SlowDurableStore extends MemoryStore {
  durableCursor: number | undefined;
  constructor(
    private readonly botName: string,
    private readonly later: () => Promise<unknown>,
  ) {
    super();
  }
  /** A slow commit (what the ledger waits for before a conversation's next message). */
  override async commit(): Promise<void> {
    const cursor = await this.namespace(this.botName).namespace("runtime").get("cursor");
    await this.later();
    if (typeof cursor === "number") this.durableCursor = Math.max(this.durableCursor ?? -1, cursor);
  }
}

/**
 * Resolves once the bot has taken every event waiting in its queue and polls again (or has no
 * queue): by then it has handed over every message sent before, to be run as soon as it may.
 */
const queueTaken = () =>
  sandbox.control.waitFor(() => {
    const queue = sandbox.control.queues().find((q) => q.email === BOT);
    return !queue || (queue.parked && queue.pending_events === 0);
  });

let daemon: Daemon | undefined;

async function startDaemon(sandbox: Sandbox, definition: BotDefinition<never, never>, store: StateBackend) {
  const dir = await mkdtemp(join(tmpdir(), "bothost-edges-"));
  const file = join(dir, "bothost.yaml");
  await writeFile(
    file,
    `server:\n  url: ${sandbox.url}\nbots:\n  edge:\n    module: ./unused.ts\n    email: ${BOT}\n    api_key: \${KEY}\n`,
  );
  const config = await loadConfig(file, { env: { KEY: sandbox.control.apiKeyOf(BOT) } });
  await rm(dir, { recursive: true, force: true });
  const log = createLogger({
    level: "silent",
    pretty: false,
    destination: new Writable({ write: (_c, _e, done) => done() }),
  });
  const started = new Daemon({
    config,
    bots: [{ name: "edge", definition, settings: undefined }],
    store,
    log,
  });
  await started.start();
  return started;
}
const send = (content: string) =>
  sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content }).id;

describe("first start", () => {
  it("handles a message sent right after the first registration, exactly once", async () => {
    const seen: number[] = [];
    // Hold GET /messages so the window between /register and the catch-up stays open until the
    // message is sent. The lookup before the registration (the server check's) is let through.
    const control = sandbox.control;
    control.delay(60_000, { paths: ["/messages"] });
    const starting = startInProcessDaemon(sandbox, {
      edge: {
        email: BOT,
        definition: bot((b) => b.on("message", (ctx) => void seen.push(ctx.event.message.id))),
      },
    });
    await control.waitFor(() => control.delayed() === 1);
    expect(control.queues()).toEqual([]);
    control.delay(0);
    control.delay(60_000, { paths: ["/messages"] });
    // The bot's queue (a first start records the server from it: no other registration).
    await control.waitFor(() => control.queues().length === 1);
    const inWindow = send("sent just after the queue was registered");
    control.delay(0);
    harness = await starting;
    const after = send("sent once running");
    await expect.poll(() => seen.length).toBe(2);
    expect(seen).toEqual([inWindow, after]);
    expect(harness.daemon.bots[0]!.status.duplicates).toBe(1);
    // A first start missed nothing: no catch-up line.
    expect(harness.logs.some((l) => l.msg === "caught up after a new queue")).toBe(false);
  });

  it("does not handle messages sent before the first start", async () => {
    const seen: number[] = [];
    send("history");
    harness = await startInProcessDaemon(sandbox, {
      edge: {
        email: BOT,
        definition: bot((b) => b.on("message", (ctx) => void seen.push(ctx.event.message.id))),
      },
    });
    const fresh = send("fresh");
    await expect.poll(() => seen).toEqual([fresh]);
  });
});

describe("catch-up replay", () => {
  it("hands replayed messages over in the queue's shape: raw Markdown, empty topic kept", async () => {
    const seen: { content: string; topic: string; replayed: boolean }[] = [];
    harness = await startInProcessDaemon(sandbox, {
      edge: {
        email: BOT,
        definition: bot((b) =>
          b.on("message", (ctx) => {
            const m = ctx.event.message;
            seen.push({ content: m.content, topic: m.subject, replayed: ctx.replayed });
          }),
        ),
      },
    });
    const post = (topic: string) =>
      sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic, content: "**bold** `code`" });
    post("");
    await expect.poll(() => seen.length).toBe(1);
    sandbox.control.expireQueue({ email: BOT });
    post("");
    await expect.poll(() => seen.length).toBe(2);
    const live = { content: "**bold** `code`", topic: "" };
    expect(seen).toEqual([
      { ...live, replayed: false },
      { ...live, replayed: true },
    ]);
  });
});

describe("durability", () => {
  it("starts a conversation's next message only once the previous one's completion is committed", async () => {
    const store = new SlowDurableStore("edge", queueTaken);
    const seen: { id: number; durableCursor: number | undefined }[] = [];
    daemon = await startDaemon(
      sandbox,
      bot((b) =>
        b.on("message", (ctx) => {
          seen.push({ id: ctx.event.message.id, durableCursor: store.durableCursor });
        }),
      ),
      store,
    );
    const ids = [send("one"), send("two"), send("three"), send("four")];
    await expect.poll(() => seen.length, { timeout: 5_000 }).toBe(4);
    // A crash before a message's completion is durable re-runs it after the restart: that must
    // only ever be the message whose handler was running, never one that had finished before.
    for (let i = 1; i < ids.length; i++) expect(seen[i]!.durableCursor).toBeGreaterThanOrEqual(ids[i - 1]!);
  });
});

/**
 * With a FileStore the next message starts at once and the turn's completions are committed
 * synchronously at its end. What a restart after kill -9 would see is checked as the next handler
 * resumes from its first await: its state directory, copied then and opened as a restart opens
 * it, must hold the previous message as handled. `compactAfterBytes: 1` compacts after every
 * commit, so most completions take the other way (the next message waits for `commit()`).
 */
/** A copy of the state directory under `dir` as the OS has it now: what a kill -9 now would leave. */
function snapshot(dir: string, name: string): string {
  const copy = join(dir, name);
  cpSync(join(dir, "state"), copy, { recursive: true, filter: (src) => !src.endsWith("LOCK") });
  return copy;
}

/** What a restart on `copy` would take the message `id` for: handled, or not. */
async function handledIn(copy: string, id: number): Promise<boolean> {
  const reopened = await FileStore.open(copy, { autoFlushMs: 0 });
  try {
    return (await DeliveryLedger.open(reopened.namespace("edge").namespace("runtime"))).isDuplicate(id);
  } finally {
    await reopened.close();
  }
}

describe.each([
  { name: "with synchronous commits", compactAfterBytes: undefined },
  { name: "while the store compacts", compactAfterBytes: 1 },
])("durability $name", ({ compactAfterBytes }) => {
  /**
   * The daemon on a FileStore in a directory of its own; each message's handler is `handle`, told
   * the message's id and the one of the message before it. Returns the directory and a stop.
   */
  async function startOnDisk(handle: (id: number, before: number | undefined) => Promise<unknown>) {
    const dir = await mkdtemp(join(tmpdir(), "bothost-sync-commit-"));
    const store = await FileStore.open(join(dir, "state"), {
      autoFlushMs: 0,
      ...(compactAfterBytes ? { compactAfterBytes } : {}),
    });
    let previous: number | undefined;
    daemon = await startDaemon(
      sandbox,
      bot((b) =>
        b.on("message", (ctx) => {
          const before = previous;
          previous = ctx.event.message.id;
          return handle(previous, before);
        }),
      ),
      store,
    );
    const stop = async () => {
      await daemon?.stop();
      daemon = undefined;
      await store.close();
      await rm(dir, { recursive: true, force: true });
    };
    return { dir, stop };
  }

  it("has the previous completion on disk before the next handler passes its first await", async () => {
    const onDisk: { id: number; previousHandled: boolean }[] = [];
    const { dir, stop } = await startOnDisk(async (id, before) => {
      await new Promise((resolve) => setImmediate(resolve));
      if (before === undefined) return;
      const copy = snapshot(dir, `copy${onDisk.length}`);
      onDisk.push({ id, previousHandled: await handledIn(copy, before) });
    });
    const ids = Array.from({ length: 8 }, (_, i) => send(`burst ${i}`));
    await expect.poll(() => onDisk.length, { timeout: 10_000 }).toBe(ids.length - 1);
    expect(onDisk).toEqual(ids.slice(1).map((id) => ({ id, previousHandled: true })));
    await stop();
  });

  // An `async` handler that awaits nothing slow resumes within the turn its run began in: a
  // conversation's messages that wait behind a slow one then run one after another in a single
  // turn, and only the first completion of a turn is committed at once (in a microtask).
  it("has the previous completion on disk before the next handler resumes within the turn", async () => {
    const gate = deferred();
    const resumed: { id: number; before: number; copy: string }[] = [];
    const { dir, stop } = await startOnDisk(async (id, before) => {
      if (before === undefined) return gate.promise;
      await Promise.resolve();
      resumed.push({ id, before, copy: snapshot(dir, `copy${resumed.length}`) });
    });
    const ids = Array.from({ length: 8 }, (_, i) => send(`burst ${i}`));
    await queueTaken();
    gate.resolve();
    await expect.poll(() => resumed.length, { timeout: 10_000 }).toBe(ids.length - 1);
    expect(resumed.map((r) => [r.id, r.before])).toEqual(ids.slice(1).map((id, i) => [id, ids[i]]));
    const handled = [];
    for (const r of resumed) handled.push(await handledIn(r.copy, r.before));
    expect(handled).toEqual(resumed.map(() => true));
    await stop();
  });
});

describe("graceful stop", () => {
  it("lets a running handler finish its reply", async () => {
    let started = false;
    let abortedDuringStop = false;
    const release = deferred();
    harness = await startInProcessDaemon(sandbox, {
      edge: {
        email: BOT,
        definition: bot((b) =>
          b.on("message", async (ctx) => {
            started = true;
            await release.promise;
            abortedDuringStop = ctx.signal.aborted;
            await ctx.reply(`handled ${ctx.event.message.id}`);
          }),
        ),
      },
    });
    const id = send("work");
    await expect.poll(() => started).toBe(true);
    const stopping = harness.stop();
    harness = undefined;
    // The stop is under way (the bot's queue is deleted) while the handler still runs.
    await sandbox.control.waitFor(() => sandbox.control.queues().length === 0);
    release.resolve();
    await stopping;
    expect(abortedDuringStop).toBe(false);
    expect(sandbox.control.messages().filter((m) => m.content === `handled ${id}`)).toHaveLength(1);
  });

  it("aborts a handler's signal when the shutdown deadline passes", async () => {
    let started = false;
    let sawAbort = false;
    harness = await startInProcessDaemon(
      sandbox,
      {
        edge: {
          email: BOT,
          definition: bot((b) =>
            b.on("message", async (ctx) => {
              started = true;
              await new Promise((r) => ctx.signal.addEventListener("abort", r, { once: true }));
              sawAbort = true;
            }),
          ),
        },
      },
      { global: "shutdown_timeout: 150ms" },
    );
    send("never finishes on its own");
    await expect.poll(() => started).toBe(true);
    const logs = harness.logs;
    await harness.stop();
    harness = undefined;
    expect(sawAbort).toBe(true);
    expect(logs.find((l) => l.msg === "daemon stopped")).toMatchObject({ abandoned: 1 });
  });

  it("a handler that throws when the shutdown deadline aborts it logs no error: it runs again at the next start", async () => {
    let started = false;
    harness = await startInProcessDaemon(
      sandbox,
      {
        edge: {
          email: BOT,
          definition: bot((b) =>
            b.on("message", async (ctx) => {
              started = true;
              await new Promise((r) => ctx.signal.addEventListener("abort", r, { once: true }));
              ctx.signal.throwIfAborted();
            }),
          ),
        },
      },
      { global: "shutdown_timeout: 150ms" },
    );
    send("never finishes on its own");
    await expect.poll(() => started).toBe(true);
    const logs = harness.logs;
    await harness.stop();
    harness = undefined;
    expect(logs.filter((l) => (l.level as number) >= 50).map((l) => l.msg)).toEqual([]);
    const cut = logs.find((l) => l.msg === "handler cut short by the shutdown's deadline");
    expect(cut).toMatchObject({ level: 40, code: "ROUTER_ABORTED" });
    // The bot's stop, not its fault: said without a stack.
    expect(cut).not.toHaveProperty("err");
    expect(
      logs.find((l) => /cut off by the stop: it runs again at the next start/.test(String(l.msg))),
    ).toBeDefined();
  });
});
