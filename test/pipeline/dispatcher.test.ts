/**
 * The dispatch pipeline on its own: every source hands it an `Incoming`, and each goes through
 * accept (ledger dedup), filter (own messages), order, run (context + composer) and effects
 * (the ledger records the message as handled, durably). Messages are real ones from the sandbox.
 */
import { Writable } from "node:stream";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Client, createClient } from "../../src/api/create-client.ts";
import { serverInfoFrom } from "../../src/api/server-info.ts";
import { wireBot } from "../../src/daemon/wire-bot.ts";
import { registerParams } from "../../src/events/register-params.ts";
import { identityOf } from "../../src/events/server-queue.ts";
import { Composer } from "../../src/pipeline/composer.ts";
import type { BotContext } from "../../src/pipeline/context.ts";
import { DeliveryLedger } from "../../src/pipeline/delivery-ledger.ts";
import type { Dispatcher } from "../../src/pipeline/dispatcher.ts";
import type { Incoming } from "../../src/pipeline/incoming.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";
import type { ServerEvent } from "../../src/wire/events.ts";
import type { Message } from "../../src/wire/records.ts";
import { botOptions } from "../support/pipeline.ts";

const MEMBER = "member@sandbox.example";
const BOT = "pipe-bot@sandbox.example";

let sandbox: Sandbox;
let client: Client;
let store: MemoryStore;
let logs: Record<string, unknown>[];

beforeEach(async () => {
  sandbox = await startSandbox();
  sandbox.control.createUser({
    email: BOT,
    full_name: "Pipe",
    bot: "generic",
    owner: "owner@sandbox.example",
    channels: ["general"],
  });
  client = createClient({ url: sandbox.url, email: BOT, apiKey: sandbox.control.apiKeyOf(BOT) });
  store = new MemoryStore();
  logs = [];
});

afterEach(async () => {
  await sandbox.stop();
});

/**
 * Bot "pipe" wired as the daemon wires it, its dispatcher's handlers `composer`'s, identified
 * through a real registration.
 */
async function wired(composer: Composer<BotContext<unknown>>) {
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const log = pino({ level: "info" }, sink);
  const parts = wireBot(
    botOptions({
      name: "pipe",
      client,
      store,
      log,
      concurrency: 4,
      handlerTimeoutMs: 10_000,
      // A failing handler runs once: the retries have their own tests (test/daemon/failures.test.ts).
      retries: { attempts: 1, backoffMs: 1, maxBackoffMs: 1 },
    }),
    () => true,
  );
  const d = parts.dispatcher(composer);
  expect(await d.openLedger(new AbortController().signal)).toBe(true);
  const reg = await client.events.register(registerParams({ eventTypes: ["message"] }));
  parts.contexts.identify(serverInfoFrom(reg), await identityOf(reg, client));
  return { dispatcher: d, contexts: parts.contexts };
}

const dispatcherFor = async (composer: Composer<BotContext<unknown>>): Promise<Dispatcher> =>
  (await wired(composer)).dispatcher;

/** Send a message as `from` and return it as the server serves it. */
async function sent(from: string, content: string): Promise<Message> {
  const { id } = sandbox.control.sendAs(from, { type: "stream", to: "general", topic: "pipe", content });
  const page = await client.messages.get({ anchor: id, num_before: 0, num_after: 0 });
  return page.messages[0]!;
}

const messageEvent = (message: Message): ServerEvent => ({ id: 1, type: "message", message, flags: [] });
const live = (event: ServerEvent): Incoming => ({
  event,
  replayed: false,
  issue: undefined,
  reply: undefined,
});

/** Accept and wait for the handlers; false when the pipeline dropped it. */
function through(d: Dispatcher, incoming: Incoming): Promise<boolean> {
  return new Promise((resolve) => {
    if (!d.accept(incoming, () => resolve(true))) resolve(false);
  });
}

describe("Dispatcher", () => {
  it("runs a message once: the same message again is a duplicate, and the ledger has it durably", async () => {
    const seen: number[] = [];
    const d = await dispatcherFor(
      new Composer<BotContext<unknown>>().on("message", (ctx) => {
        seen.push((ctx.event as { message: { id: number } }).message.id);
      }),
    );
    const m = await sent(MEMBER, "hello");
    expect(await through(d, live(messageEvent(m)))).toBe(true);
    expect(await through(d, { ...live(messageEvent(m)), replayed: true })).toBe(false);
    expect(seen).toEqual([m.id]);
    expect(d.stats()).toMatchObject({ received: 2, handled: 1, duplicates: 1, failed: 0 });
    // Committed before the handlers count as finished: a new ledger on the same store starts after it.
    const reopened = await DeliveryLedger.open(store.namespace("pipe").namespace("runtime"));
    expect(reopened.cursor).toBe(m.id);
  });

  it("drops the bot's own messages but records them as handled", async () => {
    let ran = 0;
    const d = await dispatcherFor(
      new Composer<BotContext<unknown>>().on("message", () => {
        ran++;
      }),
    );
    const own = await sent(BOT, "my own");
    expect(await through(d, live(messageEvent(own)))).toBe(false);
    expect(ran).toBe(0);
    expect(d.ledger?.isDuplicate(own.id)).toBe(true);
  });

  it("hands the record's replayed flag, schema issue and reply function to the context", async () => {
    const contexts: { replayed: boolean; issue: string | undefined; reply: unknown }[] = [];
    const replied: string[] = [];
    const replyFn = async (content: string) => {
      replied.push(content);
      return { id: 1 };
    };
    const d = await dispatcherFor(
      new Composer<BotContext<unknown>>().on(["*", "unknown"], async (ctx) => {
        contexts.push({ replayed: ctx.replayed, issue: ctx.eventIssue, reply: ctx.reply });
        if (ctx.event.type === "message") await ctx.reply("in the response");
      }),
    );
    const m = await sent(MEMBER, "replay me");
    await through(d, { event: messageEvent(m), replayed: true, issue: undefined, reply: replyFn });
    await through(d, {
      event: { id: 2, type: "typing" },
      replayed: false,
      issue: "no sender",
      reply: undefined,
    });
    expect(contexts).toEqual([
      { replayed: true, issue: undefined, reply: expect.any(Function) },
      { replayed: false, issue: "no sender", reply: expect.any(Function) },
    ]);
    // The message's reply went to the function it came with (an outgoing webhook's response).
    expect(replied).toEqual(["in the response"]);
  });

  it("counts and logs a failing handler, and still records its message as handled", async () => {
    const d = await dispatcherFor(
      new Composer<BotContext<unknown>>().on("message", async () => {
        throw new Error("boom");
      }),
    );
    const m = await sent(MEMBER, "fail");
    expect(await through(d, live(messageEvent(m)))).toBe(true);
    expect(d.stats()).toMatchObject({ handled: 0, failed: 1 });
    expect(
      logs.some((l) => l.msg === "handler failed" && (l.err as { message: string }).message === "boom"),
    ).toBe(true);
    expect(d.ledger?.cursor).toBe(m.id);
  });

  // A run's signal is made when something reads it: an AbortController per message costs more
  // than the rest of a synchronous run (a burst's dispatch took twice as long with one).
  it.each([
    ["a synchronous", () => {}],
    ["an async", async () => {}],
  ])("makes no AbortController for %s handler that never reads ctx.signal", async (_kind, handler) => {
    const d = await dispatcherFor(new Composer<BotContext<unknown>>().on("message", handler));
    const messages = [await sent(MEMBER, "one"), await sent(MEMBER, "two"), await sent(MEMBER, "three")];
    const Original = globalThis.AbortController;
    let made = 0;
    globalThis.AbortController = class extends Original {
      constructor() {
        super();
        made++;
      }
    };
    try {
      const handled = await Promise.all(messages.map((m) => through(d, live(messageEvent(m)))));
      expect(handled).toEqual([true, true, true]);
    } finally {
      globalThis.AbortController = Original;
    }
    expect(d.stats()).toMatchObject({ handled: 3, failed: 0 });
    expect(made).toBe(0);
  });

  it("runs onStart handlers and a gap on the bot's key, without the ledger", async () => {
    const order: string[] = [];
    let gapRan!: () => void;
    const gapDone = new Promise<void>((resolve) => {
      gapRan = resolve;
    });
    const d = await dispatcherFor(
      new Composer<BotContext<unknown>>().on("*", (ctx) => {
        order.push(ctx.event.type);
        gapRan();
      }),
    );
    d.runOnStart([
      async (ctx) => {
        order.push(`start:${ctx.bot.name}`);
      },
    ]);
    d.dispatchNow({
      type: "gap",
      reason: "restart",
      since: undefined,
      eventTypes: ["reaction"],
      replayedMessages: 0,
      skippedMessages: 0,
    });
    await gapDone;
    expect(order).toEqual(["start:pipe", "gap"]);
    expect(d.stats().received).toBe(0);
  });

  it("runs a handler that is not an event's with the bot's context, and hands its failure back", async () => {
    const { contexts } = await wired(new Composer<BotContext<unknown>>());
    const signal = new AbortController().signal;
    const seen = contexts.runHandler(
      signal,
      "job",
      { job: "nightly" },
      (base) => Object.assign(base, { job: { id: "nightly" } }),
      (ctx) => {
        ctx.log.info("job ran");
        return { bot: ctx.bot.name, job: ctx.job.id, signal: ctx.signal };
      },
    );
    expect(seen).toEqual({ bot: "pipe", job: "nightly", signal });
    expect(logs.find((l) => l.msg === "job ran")).toMatchObject({ job: "nightly" });
    await expect(
      contexts.runHandler(
        signal,
        "job",
        {},
        (base) => base,
        async () => {
          throw new Error("job failed");
        },
      ),
    ).rejects.toThrow("job failed");
  });
});
