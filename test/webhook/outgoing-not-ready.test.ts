/**
 * Outgoing-webhook deliveries that come while their bot is not ready: starting (its register held
 * by the sandbox) or stopped alone and started again. The server posts "Failure! Third party
 * responded with …" for any error status and never retries it, so such a delivery is held until
 * the bot is ready, and handled once either way; one answered already when the daemon stops before
 * the bot is ready is kept as a dead letter, which the next start runs.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { afterEach, expect, it } from "vitest";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import type { Daemon } from "../../src/daemon/daemon.ts";
import { NoRetry } from "../../src/errors/no-retry.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { FileStore } from "../../src/state/file-store.ts";
import type { StateBackend } from "../../src/state/state-store.ts";
import { deferred } from "../support/deferred.ts";
import { gatedBackend, StoreGate } from "../support/gated-store.ts";
import { freePort, type RunningDaemon, startDaemon } from "../support/http-daemon.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { postDelivery, webhookBot } from "../support/outgoing-delivery.ts";
import { HELPER, MEL, outgoingOrg, TOKEN } from "../support/outgoing-org.ts";

let sandbox: Sandbox | undefined;
let running: Promise<RunningDaemon> | undefined;

afterEach(async () => {
  sandbox?.control.delay(0);
  await (await running)?.stop();
  await sandbox?.stop();
  running = undefined;
  sandbox = undefined;
});

const bot = webhookBot;

/**
 * A sandbox whose outgoing-webhook bot points at bothost, and bothost starting with its
 * `/register` held by the sandbox (until `sb.control.delay(0)`): the listener is up, the bot not ready.
 */
async function startingWithRegisterHeld(
  definition: BotDefinition<never, never>,
  clock: ManualClock,
  stateDir?: string,
  store?: StateBackend,
  more = "",
) {
  const port = await freePort();
  const sb = await startSandbox({ org: outgoingOrg(port) });
  sandbox = sb;
  sb.control.delay(3_600_000, { paths: [/^\/register$/] });
  const logs: Record<string, unknown>[] = [];
  let daemon: Daemon | undefined;
  const start = (backend?: StateBackend) =>
    startDaemon(
      sb,
      {
        helper: {
          email: HELPER,
          definition,
          extra: `outgoing_webhook:\n  path: /hooks/helper\n  token: \${HELPER_TOKEN}\n  reply_deadline: 8s${more}`,
        },
      },
      {
        port,
        env: { HELPER_TOKEN: TOKEN },
        clock,
        logs,
        ...(stateDir ? { stateDir } : {}),
        ...(backend ? { store: backend } : {}),
        created: (d) => {
          daemon = d;
        },
      },
    );
  running = start(store);
  await sb.control.waitFor(() => sb.control.delayed() === 1);
  return { sb, logs, url: `http://127.0.0.1:${port}`, daemon: () => daemon!, start };
}

const post = postDelivery;

/** A channel message that mentions no one: the sandbox delivers nothing for it; a test posts it. */
const quiet = (sb: Sandbox, topic: string) =>
  sb.control.sendAs(MEL, { type: "stream", to: "general", topic, content: topic }).id;

const mention = (sb: Sandbox, content: string, topic = "ping") =>
  sb.control.sendAs(MEL, { type: "stream", to: "general", topic, content }).id;

const answered = (logs: Record<string, unknown>[]) =>
  logs.filter((l) => l.route === "/hooks/helper").map((l) => l.status);
/** Deliveries that reached the route: held for the bot, or answered. */
const arrived = (logs: Record<string, unknown>[]) =>
  logs.filter((l) => l.msg === "outgoing webhook: delivery held until the bot is ready").length +
  answered(logs).length;
const failures = (sb: Sandbox) =>
  sb.control.messages().filter((m) => String(m.content).startsWith("Failure!"));

it("a mention delivered while the bot registers gets its reply in the response once the bot is ready; no Failure! message", async () => {
  const clock = new ManualClock(Date.now());
  const seen: number[] = [];
  const { sb, logs } = await startingWithRegisterHeld(
    bot((b) =>
      b.on("message", (ctx) => {
        seen.push(ctx.event.message.id);
        return ctx.reply(`hi, ${ctx.event.message.subject}`);
      }),
    ),
    clock,
  );
  const id = mention(sb, "@**Helper** hello", "early");
  await expect.poll(() => arrived(logs)).toBe(1);
  await clock.tick(3_000); // within the 8 s reply deadline
  sb.control.delay(0);
  await running;
  await sb.control.settleWebhooks();
  expect(answered(logs)).toEqual([200]);
  expect(failures(sb)).toEqual([]);
  expect(seen).toEqual([id]);
  expect(sb.control.messages().at(-1)).toMatchObject({
    content: "hi, early",
    client: "OutgoingWebhookResponse",
  });
});

it("a mention delivered while the bot registers, past the reply deadline: answered without a reply in time, handled once when the bot is ready, its reply through the API", async () => {
  const clock = new ManualClock(Date.now());
  const seen: number[] = [];
  const { sb, logs, url } = await startingWithRegisterHeld(
    bot((b) =>
      b.on("message", (ctx) => {
        seen.push(ctx.event.message.id);
        return ctx.reply(`late hi, ${ctx.event.message.subject}`);
      }),
    ),
    clock,
  );
  const id = mention(sb, "@**Helper** hello", "slow start");
  await expect.poll(() => arrived(logs)).toBe(1);
  await clock.tick(8_000); // the reply deadline, before the server's 10 s
  await expect.poll(() => answered(logs)).toEqual([200]);
  await sb.control.settleWebhooks();
  expect(seen).toEqual([]);
  // A repeat of the same delivery (the server retries timeouts) while the bot is still not ready.
  const repeat = post(sb, url, id);
  await expect.poll(() => arrived(logs)).toBe(3);
  await clock.tick(8_000);
  expect(await repeat).toEqual({ status: 200, body: { response_not_required: true } });
  sb.control.delay(0);
  await running;
  await expect.poll(() => sb.control.messages().at(-1)?.content).toBe("late hi, slow start");
  expect(seen).toEqual([id]);
  expect(failures(sb)).toEqual([]);
  expect(sb.control.messages().at(-1)).not.toMatchObject({ client: "OutgoingWebhookResponse" });
  expect(sb.control.messages().filter((m) => m.content === "late hi, slow start")).toHaveLength(1);
});

it("a mention delivered after the bot's stop began (its drain under way) waits for it to start again and gets its reply; no Failure! message", async () => {
  const clock = new ManualClock(Date.now());
  const gate = deferred();
  const seen: string[] = [];
  const { sb, logs } = await startingWithRegisterHeld(
    bot((b) =>
      b.on("message", async (ctx) => {
        seen.push(ctx.event.message.subject);
        if (ctx.event.message.subject === "first") await gate.promise;
        await ctx.reply(`done ${ctx.event.message.subject}`);
      }),
    ),
    clock,
  );
  sb.control.delay(0);
  const d = await running!;
  mention(sb, "@**Helper** one", "first");
  await expect.poll(() => seen).toEqual(["first"]);
  const helper = d.daemon.bots[0]!;
  // The stop drains the handler still running (gated) for up to its deadline.
  const stopped = helper.stop(60_000);
  mention(sb, "@**Helper** two", "second");
  await expect.poll(() => arrived(logs)).toBe(1);
  gate.resolve();
  await stopped;
  sb.control.delay(3_600_000, { paths: [/^\/register$/] });
  const started = helper.start();
  await sb.control.waitFor(() => sb.control.delayed() === 1);
  await clock.tick(3_000);
  sb.control.delay(0);
  await started;
  await sb.control.settleWebhooks();
  expect(seen).toEqual(["first", "second"]);
  expect(failures(sb)).toEqual([]);
  expect(answered(logs)).toEqual([200, 200]);
  expect(sb.control.messages().map((m) => m.content)).toEqual([
    "@**Helper** one",
    "@**Helper** two",
    "done first",
    "done second",
  ]);
});

it("a delivery held when the listener closes (the daemon stops) is not answered 503: its connection is closed, so the server retries it", async () => {
  const clock = new ManualClock(Date.now());
  const seen: number[] = [];
  const { sb, logs } = await startingWithRegisterHeld(
    bot((b) => b.on("message", (ctx) => void seen.push(ctx.event.message.id))),
    clock,
  );
  sb.control.delay(0);
  const d = await running!;
  await d.daemon.bots[0]!.stop(1_000);
  mention(sb, "@**Helper** hello", "at exit");
  await expect.poll(() => arrived(logs)).toBe(1);
  // The stop does not wait out the held delivery's deadline (the clock does not move).
  await d.stop();
  running = undefined;
  await sb.control.settleWebhooks();
  expect(answered(logs)).toEqual([]);
  // The server retried it (3 times) against a listener that is gone: no 503 answered.
  expect(failures(sb).map((m) => m.content)).toEqual(["Failure! Bot is unavailable"]);
  expect(seen).toEqual([]);
});

it("a mention answered without a reply while the bot registers, the daemon stopped before it is ready: kept as a dead letter, handled at the next start, its reply through the API", async () => {
  const clock = new ManualClock(Date.now());
  const seen: number[] = [];
  const stateDir = await mkdtemp(join(tmpdir(), "bothost-held-"));
  try {
    const definition = bot((b) =>
      b.on("message", (ctx) => {
        seen.push(ctx.event.message.id);
        return ctx.reply(`late hi, ${ctx.event.message.subject}`);
      }),
    );
    const { sb, logs, daemon, start } = await startingWithRegisterHeld(definition, clock, stateDir);
    const id = mention(sb, "@**Helper** hello", "stopped early");
    await expect.poll(() => arrived(logs)).toBe(1);
    await clock.tick(8_000); // the reply deadline: answered, the delivery kept
    await expect.poll(() => answered(logs)).toEqual([200]);
    // The stop a SIGTERM makes, the bot still registering.
    await daemon().stop();
    await (await running)?.stop();
    await sb.control.settleWebhooks();
    expect(seen).toEqual([]);
    // The server took the 200 as the answer: no retry, no Failure! message.
    expect(failures(sb)).toEqual([]);
    sb.control.delay(0);
    running = start();
    await running;
    await expect.poll(() => seen).toEqual([id]);
    await expect.poll(() => sb.control.messages().at(-1)?.content).toBe("late hi, stopped early");
    expect(sb.control.messages().at(-1)).not.toMatchObject({ client: "OutgoingWebhookResponse" });
    expect(failures(sb)).toEqual([]);
    // The stop said where the delivery went.
    const kept = logs.filter((l) =>
      String(l.msg).includes("are kept as dead letters, replayed at the next start"),
    );
    expect(kept).toMatchObject([{ count: 1, deadLetters: ["helper/1"] }]);
    // Handled, the dead letter is removed.
    await expect.poll(() => daemon().letters.list("helper")).toEqual([]);
  } finally {
    await (await running)?.stop();
    running = undefined;
    await rm(stateDir, { recursive: true, force: true });
  }
});

it("a delivery whose dead letter's write fails is not answered (its connection closed, for the server to retry); its letter landed before the failure is the retry's, so it runs once", async () => {
  const clock = new ManualClock(Date.now());
  const seen: number[] = [];
  const stateDir = await mkdtemp(join(tmpdir(), "bothost-held-"));
  try {
    const gate = new StoreGate();
    const files = await FileStore.open(stateDir, { now: () => clock.now() });
    const store = gatedBackend(files, ["helper", "dead-letters"], gate, { updates: true });
    const definition = bot((b) => b.on("message", (ctx) => void seen.push(ctx.event.message.id)));
    const { sb, logs, daemon } = await startingWithRegisterHeld(definition, clock, stateDir, store);
    const id = mention(sb, "@**Helper** hello", "lost reply");
    await expect.poll(() => arrived(logs)).toBe(1);
    // The letter's number lands; the letter lands too, but its write is answered with an error.
    gate.skip = 1;
    gate.mode = "lose";
    await clock.tick(8_000);
    // Not answered: the server retries at once, and the retry is held in its turn.
    await expect.poll(() => arrived(logs)).toBe(2);
    expect(answered(logs)).toEqual([]);
    expect(logs.filter((l) => String(l.msg).includes("could not keep a delivery"))).toHaveLength(1);
    await clock.tick(8_000);
    await expect.poll(() => answered(logs)).toEqual([200]);
    await sb.control.settleWebhooks();
    expect(failures(sb)).toEqual([]);
    expect(await daemon().letters.list("helper")).toMatchObject([{ source: "webhook", attempts: 0 }]);
    sb.control.delay(0);
    await running;
    await expect.poll(() => daemon().letters.list("helper")).toEqual([]);
    expect(seen).toEqual([id]);
  } finally {
    sandbox?.control.delay(0); // a failed assertion leaves the start held
    await (await running)?.stop();
    running = undefined;
    await rm(stateDir, { recursive: true, force: true });
  }
});

/** A state store under `stateDir` whose dead-letter writes go through `gate`. */
async function gatedLetters(stateDir: string, clock: ManualClock) {
  const gate = new StoreGate();
  const files = await FileStore.open(stateDir, { now: () => clock.now() });
  return { gate, store: gatedBackend(files, ["helper", "dead-letters"], gate, { updates: true }) };
}

interface KeptCase {
  clock: ManualClock;
  /** The ids of the messages the bot's handler ran on, a repeat each time. */
  seen: number[];
  stateDir: string;
  definition: BotDefinition<never, never>;
}

/** Runs `body` with a state folder (removed after) and a bot that records each run in `seen`. */
async function keptCase(body: (c: KeptCase) => Promise<void>): Promise<void> {
  const clock = new ManualClock(Date.now());
  const seen: number[] = [];
  const stateDir = await mkdtemp(join(tmpdir(), "bothost-held-"));
  const definition = bot((b) => b.on("message", (ctx) => void seen.push(ctx.event.message.id)));
  try {
    await body({ clock, seen, stateDir, definition });
  } finally {
    sandbox?.control.delay(0); // a failed assertion leaves the start held
    await (await running)?.stop();
    running = undefined;
    await rm(stateDir, { recursive: true, force: true });
  }
}

/** bothost starting (its register held) on `store`, and the server's first delivery of a new message, held. */
async function firstDelivery(c: KeptCase, topic: string, store?: StateBackend) {
  const started = await startingWithRegisterHeld(c.definition, c.clock, c.stateDir, store);
  const { sb, url, logs } = started;
  const id = quiet(sb, topic);
  const first = post(sb, url, id);
  await expect.poll(() => arrived(logs)).toBe(1);
  return { ...started, id, first };
}

const noReply = { status: 200, body: { response_not_required: true } };

it("the server's repeat of a kept delivery (its answer past the server's timeout, the letter's write slow) coming once the bot is ready: the handler runs once, not again from the letter", () =>
  keptCase(async (c) => {
    const { gate, store } = await gatedLetters(c.stateDir, c.clock);
    const { sb, url, daemon, id, first } = await firstDelivery(c, "slow letter", store);
    gate.mode = "hang";
    await c.clock.tick(8_000); // the reply deadline: its letter's write hangs, the delivery unanswered
    await gate.stoppedAt(1);
    sb.control.delay(0);
    await running;
    // The server's 10 s passed without an answer: it sends the delivery again, the bot ready now.
    expect(await post(sb, url, id)).toEqual(noReply);
    expect(c.seen).toEqual([id]);
    gate.open();
    expect(await first).toEqual(noReply);
    await expect.poll(() => daemon().letters.list("helper")).toEqual([]);
    expect(c.seen).toEqual([id]);
  }));

it.each([
  ["the bot ready within its deadline", false],
  ["kept again (a second letter), the bot not ready by its deadline", true],
])(
  "a kept delivery whose answer the server never got (the daemon gone first) runs once at the next start, though the server's retry comes there too: %s",
  (_, keptAgain) =>
    keptCase(async (c) => {
      const { sb, logs, url, daemon, start, id, first } = await firstDelivery(c, "answer lost");
      await c.clock.tick(8_000);
      // Written as a letter, then answered; the server did not get the answer (a kill as it was sent).
      expect(await first).toEqual(noReply);
      await daemon().stop();
      await (await running)?.stop();
      sb.control.delay(3_600_000, { paths: [/^\/register$/] });
      running = start();
      // The listener up again (the first start's register is still held too).
      const up = () =>
        request(`${url}/healthz`, { dispatcher: new Agent() }).then(
          (r) => r.body.dump().then(() => true),
          () => false,
        );
      await expect.poll(up).toBe(true);
      // The server's retry reaches the next start and waits for the bot.
      const retry = post(sb, url, id);
      await expect.poll(() => arrived(logs)).toBe(3);
      if (keptAgain) {
        await c.clock.tick(8_000);
        expect(await retry).toEqual(noReply);
        expect(await daemon().letters.list("helper")).toHaveLength(2);
      }
      sb.control.delay(0);
      await running;
      expect(await retry).toEqual(noReply);
      await expect.poll(() => daemon().letters.list("helper")).toEqual([]);
      expect(c.seen).toEqual([id]);
    }),
);

it("a delivery whose letter landed though its write failed (its connection closed), retried by the server once the bot is ready and the letter replayed: the handler runs once", () =>
  keptCase(async (c) => {
    const { gate, store } = await gatedLetters(c.stateDir, c.clock);
    const { sb, url, daemon, id, first } = await firstDelivery(c, "landed", store);
    gate.skip = 1; // the letter's number lands; the letter lands too, its write answered with an error
    gate.mode = "lose";
    await c.clock.tick(8_000);
    expect(await first).toHaveProperty("error");
    sb.control.delay(0);
    await running;
    await expect.poll(() => daemon().letters.list("helper")).toEqual([]);
    expect(c.seen).toEqual([id]);
    // The server's retry of the closed connection.
    expect(await post(sb, url, id)).toEqual(noReply);
    expect(c.seen).toEqual([id]);
  }));

it("a kept delivery handled at its replay, the daemon cut off before its letter's removal landed: the next start runs neither the letter nor the server's repeat again", () =>
  keptCase(async (c) => {
    const gate = new StoreGate();
    const files = await FileStore.open(c.stateDir, { now: () => c.clock.now() });
    const store = gatedBackend(files, ["helper", "dead-letters"], gate, { deletes: true });
    const { sb, url, daemon, start, id, first } = await firstDelivery(c, "removal cut", store);
    await c.clock.tick(8_000);
    expect(await first).toEqual(noReply);
    // The letter's removal, once its replay is handled, is held by the store.
    gate.mode = "hang";
    sb.control.delay(0);
    await running;
    await gate.stoppedAt(1);
    expect(c.seen).toEqual([id]);
    // Cut off as a crash cuts it: the removal never lands.
    const stopped = daemon().stop({ deadlineMs: 0 });
    gate.refuse();
    await stopped;
    await (await running)?.stop();
    gate.open();
    running = start();
    await running;
    await expect.poll(() => daemon().letters.list("helper")).toEqual([]);
    expect(c.seen).toEqual([id]);
    // The server's repeat (its answer lost at the first start) is a duplicate too.
    expect(await post(sb, url, id)).toEqual(noReply);
    expect(c.seen).toEqual([id]);
  }));

/**
 * bothost starting with `definition` (`more`: lines for its config entry); the server's delivery
 * of a new message kept and answered; then the bot ready.
 */
async function keptThenReady(c: KeptCase, definition: BotDefinition<never, never>, topic: string, more = "") {
  const started = await startingWithRegisterHeld(definition, c.clock, c.stateDir, undefined, more);
  const { sb, logs, url } = started;
  const id = quiet(sb, topic);
  const first = post(sb, url, id);
  await expect.poll(() => arrived(logs)).toBe(1);
  await c.clock.tick(8_000);
  expect(await first).toEqual(noReply);
  sb.control.delay(0);
  await running;
  return { ...started, id };
}

/** As keptThenReady, with a bot whose handler throws while `flaky.broken`. */
async function keptFlaky(c: KeptCase, topic: string, more = "") {
  const flaky = { broken: true };
  const definition = bot((b) =>
    b.on("message", (ctx) => {
      c.seen.push(ctx.event.message.id);
      if (flaky.broken) throw new Error("flaky");
    }),
  );
  return { ...(await keptThenReady(c, definition, topic, more)), flaky };
}

it("a kept delivery whose replay fails once, the daemon stopped in the pause before its next attempt: replayed at the next start", () =>
  keptCase(async (c) => {
    const { sb, logs, url, daemon, start, id, flaky } = await keptFlaky(c, "flaky");
    // Its first run failed; the pause before the next attempt waits for a clock that does not move.
    await expect
      .poll(() => logs.filter((l) => l.msg === "handler failed; running it again after a pause"))
      .toHaveLength(1);
    expect(c.seen).toEqual([id]);
    await (await running)?.stop();
    flaky.broken = false;
    running = start();
    await running;
    await expect.poll(() => c.seen).toEqual([id, id]);
    await expect.poll(() => daemon().letters.list("helper")).toEqual([]);
    // The server's repeat of the delivery (its answer lost at the first start) runs nothing more.
    expect(await post(sb, url, id)).toEqual(noReply);
    expect(c.seen).toEqual([id, id]);
  }));

it("a kept delivery whose replay failed (kept again): the server's repeat runs it once, and the letter's retry then runs nothing more", () =>
  keptCase(async (c) => {
    const { sb, logs, url, daemon, id, flaky } = await keptFlaky(
      c,
      "kept again",
      "\nretries: { attempts: 1 }",
    );
    // Its replay's one attempt fails: kept again, no longer marked for replay.
    const letters = async () =>
      (await daemon().letters.list("helper")).map((l) => [l.source, l.attempts, l.retryRequestedAt]);
    await expect.poll(letters).toEqual([["webhook", 1, undefined]]);
    await expect
      .poll(() => logs.filter((l) => String(l.msg).startsWith("a kept delivery's replay was not handled")))
      .toHaveLength(1);
    expect(c.seen).toEqual([id]);
    flaky.broken = false;
    // The server repeats the delivery, past the time answers are kept for repeats (10 minutes): never
    // handled, it runs.
    await c.clock.tick(600_001);
    expect(await post(sb, url, id)).toEqual(noReply);
    expect(c.seen).toEqual([id, id]);
    // An operator's retry of the letter finds its message handled: removed, not run again.
    const [letter] = await daemon().letters.list("helper");
    await daemon().letters.retry({ ids: [letter!.id] });
    await expect.poll(() => daemon().letters.list("helper")).toEqual([]);
    expect(c.seen).toEqual([id, id]);
  }));

it("a kept delivery whose replay throws NoRetry with deadLetter: false is done with: the server's repeat runs nothing", () =>
  keptCase(async (c) => {
    const definition = bot((b) =>
      b.on("message", (ctx) => {
        c.seen.push(ctx.event.message.id);
        throw new NoRetry("handled by the bot", { deadLetter: false });
      }),
    );
    const { sb, url, daemon, start, id } = await keptThenReady(c, definition, "given up");
    await expect.poll(() => c.seen).toEqual([id]);
    await expect.poll(() => daemon().letters.list("helper")).toEqual([]);
    await (await running)?.stop();
    running = start();
    await running;
    // The server's repeat (its answer lost) at the next start: the message was handled, as a live
    // one whose handler threw NoRetry is.
    expect(await post(sb, url, id)).toEqual(noReply);
    expect(c.seen).toEqual([id]);
  }));

it("a delivery arriving on a kept-alive connection while the daemon's stop closes the listener is not answered 503", async () => {
  const clock = new ManualClock(Date.now());
  const gate = deferred();
  const seen: string[] = [];
  const { sb, logs, url } = await startingWithRegisterHeld(
    bot((b) =>
      b.on("message", async (ctx) => {
        const topic = ctx.event.message.subject;
        seen.push(topic);
        if (topic === "one") await gate.promise;
        await ctx.reply(`done ${topic}`);
      }),
    ),
    clock,
  );
  sb.control.delay(0);
  const d = await running!;
  // The server's deliveries, posted here on one kept-alive connection.
  const connection = new Agent({ connections: 1 });
  const deliver = (topic: string) => post(sb, url, quiet(sb, topic), connection);
  const first = deliver("one");
  await expect.poll(() => seen).toEqual(["one"]);
  const stopped = d.stop();
  running = undefined;
  // The listener closes: it takes no new connection (it waits for the first delivery).
  const refused = () =>
    request(`${url}/healthz`, { dispatcher: new Agent() }).then(
      (r) => r.body.dump().then(() => false),
      () => true,
    );
  await expect.poll(refused).toBe(true);
  // Sent while the first is in flight: it goes on the same connection once the first is answered.
  const second = deliver("two");
  gate.resolve();
  expect(await first).toEqual({ status: 200, body: { content: "done one" } });
  const answer = await second;
  await stopped;
  await connection.close();
  // Handled, or its connection refused (the server retries that): never a 503, which it does not retry.
  expect(answer).not.toMatchObject({ status: 503 });
  expect(answered(logs)).not.toContain(503);
});

it("past 100 deliveries kept for a bot not ready, the newest are not taken (their connection closed, for the server to retry) with one warning; the 100 run once it is ready", async () => {
  const clock = new ManualClock(Date.now());
  const seen: number[] = [];
  const { sb, logs, url } = await startingWithRegisterHeld(
    bot((b) => b.on("message", (ctx) => void seen.push(ctx.event.message.id))),
    clock,
  );
  const posts: Promise<unknown>[] = [];
  for (let i = 0; i < 102; i++) posts.push(post(sb, url, quiet(sb, `t${i}`)));
  await expect.poll(() => arrived(logs), { timeout: 15_000 }).toBe(102);
  await clock.tick(8_000);
  const outcomes = await Promise.all(posts);
  const closed = outcomes.filter((o) => "error" in (o as object));
  expect(closed).toHaveLength(2);
  const kept = { status: 200, body: { response_not_required: true } };
  expect(outcomes.filter((o) => JSON.stringify(o) === JSON.stringify(kept))).toHaveLength(100);
  expect(logs.filter((l) => String(l.msg).includes("too many deliveries wait for the bot"))).toHaveLength(1);
  expect(seen).toEqual([]);
  sb.control.delay(0);
  await running;
  await expect.poll(() => seen.length, { timeout: 15_000 }).toBe(100);
  expect(new Set(seen).size).toBe(100);
});

it("a mention for a bot whose start failed gets 503 at once, not held: the server's Failure! message and DM tell its owner", async () => {
  const clock = new ManualClock(Date.now());
  const { sb, logs } = await startingWithRegisterHeld(
    bot(() => {
      throw new Error("broken module");
    }),
    clock,
  );
  sb.control.delay(0);
  await running;
  mention(sb, "@**Helper** hello", "broken");
  await sb.control.settleWebhooks();
  expect(answered(logs)).toEqual([503]);
  expect(failures(sb).map((m) => m.content)).toEqual(["Failure! Third party responded with 503"]);
  expect(logs.filter((l) => l.msg === "outgoing webhook: delivery held until the bot is ready")).toEqual([]);
});
