/**
 * Outgoing-webhook deliveries answered while their handler still runs: at the reply deadline, or
 * with a reply the handler made before it returns. The server never sends an answered delivery
 * again, so such a delivery is kept before it is answered: a dead letter marked for replay and
 * marked as this daemon's run, which this daemon's dead-letter source leaves alone (a replay now
 * would run it twice), removed once the run is over. A kill between the answer and the end of the
 * run is test/e2e/outgoing-late-crash.test.ts. The letters are read as the bot's store keeps them
 * (`letters.of`): `bothost failed list` leaves out one whose run goes on (test/cli/failed-running.test.ts).
 * A late reply over max_message_length whose answer was lost is found by the retry as the server
 * cut it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import { RUNNING_HERE_LINE } from "../../src/events/dead-letter-source.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { FileStore } from "../../src/state/file-store.ts";
import type { StateBackend } from "../../src/state/state-store.ts";
import {
  KEPT_ANSWERED_LINE,
  KEPT_REPLIED_LINE,
  KEPT_RUNNING_LINE,
} from "../../src/webhook/outgoing-routes.ts";
import { deferred } from "../support/deferred.ts";
import { gatedBackend, StoreGate } from "../support/gated-store.ts";
import { freePort, type RunningDaemon, startDaemon } from "../support/http-daemon.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { postDelivery, webhookBot } from "../support/outgoing-delivery.ts";
import { HELPER, MEL, outgoingOrg, TOKEN } from "../support/outgoing-org.ts";

let sandbox: Sandbox | undefined;
let running: RunningDaemon | undefined;
let stateDir: string | undefined;

afterEach(async () => {
  await running?.stop();
  await sandbox?.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
  running = undefined;
  sandbox = undefined;
  stateDir = undefined;
});

/** The helper bot on a held clock (reply_deadline 8 s), its state in a temp folder (`store` over it, if given). */
async function setup(
  definition: BotDefinition<never, never>,
  options: {
    extra?: string;
    store?: (dir: string, clock: ManualClock) => Promise<StateBackend>;
    iface?: "zulip" | "slack";
  } = {},
) {
  const clock = new ManualClock(Date.now());
  const port = await freePort();
  sandbox = await startSandbox({ org: outgoingOrg(port, options.iface) });
  stateDir = await mkdtemp(join(tmpdir(), "bothost-late-kept-"));
  const store = await options.store?.(stateDir, clock);
  const start = async (backend = store) => {
    running = await startDaemon(
      sandbox!,
      {
        helper: {
          email: HELPER,
          definition,
          extra: `outgoing_webhook:\n  path: /hooks/helper\n  token: \${HELPER_TOKEN}\n  reply_deadline: 8s${options.extra ? `\n${options.extra}` : ""}`,
        },
      },
      { port, env: { HELPER_TOKEN: TOKEN }, clock, stateDir, ...(backend ? { store: backend } : {}) },
    );
    return running;
  };
  const d = await start();
  /** Stopped, then started again on the same state (the daemon's own store). */
  const restart = async () => {
    await running?.stop();
    return start(undefined);
  };
  return { sb: sandbox, d, clock, restart };
}

/** A channel message that mentions no one: the sandbox delivers nothing for it; the test does. */
const quiet = (sb: Sandbox, topic: string) =>
  sb.control.sendAs(MEL, { type: "stream", to: "general", topic, content: topic }).id;

const noReply = { status: 200, body: { response_not_required: true } };

/**
 * A bot whose handler counts its runs, waits for `gate` (its first run only, with `firstOnly`),
 * then replies "late" (or throws, `broken`).
 */
function slowBot(gate: Promise<void>, broken = false, firstOnly = false) {
  const seen = { runs: 0 };
  const definition = webhookBot((b) =>
    b.on("message", async (ctx) => {
      seen.runs++;
      if (seen.runs === 1 || !firstOnly) await gate;
      if (broken) throw new Error("broken after the deadline");
      await ctx.reply("late");
    }),
  );
  return { seen, definition };
}

const replies = (sb: Sandbox) => sb.control.messages().filter((m) => m.content === "late");

it("a delivery whose handler still runs at the reply deadline is kept before its answer, left alone by this daemon (an operator's retry too), and gone once the handler returns", async () => {
  const gate = deferred();
  const { seen, definition } = slowBot(gate.promise);
  const { sb, d, clock } = await setup(definition);
  const id = quiet(sb, "slow");
  const answer = postDelivery(sb, d.url, id);
  await expect.poll(() => seen.runs).toBe(1);
  await clock.tick(8_000);
  expect(await answer).toEqual(noReply);
  // Kept (written and flushed) before the answer went out.
  const kept = d.logs.findIndex((l) => l.msg === KEPT_RUNNING_LINE);
  const answered = d.logs.findIndex((l) => l.route === "/hooks/helper" && l.msg === "http request");
  expect(kept).toBeGreaterThanOrEqual(0);
  expect(kept).toBeLessThan(answered);
  const letters = await d.daemon.letters.of("helper").list();
  expect(letters).toMatchObject([
    {
      source: "webhook",
      attempts: 0,
      heldDelivery: true,
      runningIn: expect.any(String),
      retryRequestedAt: expect.any(String),
      event: { message: { id } },
    },
  ]);
  expect(d.logs[kept]).toMatchObject({ messageId: id, deadLetter: letters[0]!.id });
  // Not a failure while its run goes on: the status counts no dead letter.
  const status = await d.daemon.status();
  expect(status.bots[0]).toMatchObject({ deadLetters: 0 });
  expect(status.recentFailures).toEqual([]);
  // An operator's retry meanwhile: the run still goes here, so its letter is left to it.
  await d.daemon.letters.retry({ ids: [letters[0]!.id] });
  await expect.poll(() => d.logs.filter((l) => l.msg === RUNNING_HERE_LINE)).toHaveLength(1);
  expect(d.logs.filter((l) => l.msg === "replaying a dead letter")).toEqual([]);
  expect(await d.daemon.letters.of("helper").list()).toHaveLength(1);
  gate.resolve();
  await expect.poll(() => d.daemon.letters.of("helper").list()).toEqual([]);
  expect(seen.runs).toBe(1);
  expect(replies(sb)).toHaveLength(1);
  expect(replies(sb)[0]).not.toMatchObject({ client: "OutgoingWebhookResponse" });
});

it("a delivery kept while its handler ran, the handler then failing for good: one dead letter, the failure's, as for any failed delivery", async () => {
  const gate = deferred();
  const { seen, definition } = slowBot(gate.promise, true);
  const { sb, d, clock } = await setup(definition, { extra: "retries: { attempts: 1 }" });
  const id = quiet(sb, "broken");
  const answer = postDelivery(sb, d.url, id);
  await expect.poll(() => seen.runs).toBe(1);
  await clock.tick(8_000);
  expect(await answer).toEqual(noReply);
  expect(await d.daemon.letters.of("helper").list()).toMatchObject([{ runningIn: expect.any(String) }]);
  gate.resolve();
  const letters = async () =>
    (await d.daemon.letters.of("helper").list()).map((l) => ({
      source: l.source,
      attempts: l.attempts,
      kept: l.runningIn !== undefined,
      id: (l.event as { message: { id: number } }).message.id,
      message: l.error.message,
    }));
  await expect
    .poll(letters)
    .toEqual([{ source: "webhook", attempts: 1, kept: false, id, message: "broken after the deadline" }]);
  expect(seen.runs).toBe(1);
});

it("a delivery whose letter the store refuses at the deadline is not answered (its connection closed, for the server to retry); the retry, the handler still running, is kept in its turn, the letter that landed taken", async () => {
  const gate = deferred();
  const { seen, definition } = slowBot(gate.promise);
  const storeGate = new StoreGate();
  const { sb, d, clock } = await setup(definition, {
    store: async (dir, clock) => {
      const files = await FileStore.open(dir, { now: () => clock.now() });
      return gatedBackend(files, ["helper", "dead-letters"], storeGate, { updates: true });
    },
  });
  const id = quiet(sb, "refused");
  const first = postDelivery(sb, d.url, id);
  await expect.poll(() => seen.runs).toBe(1);
  // The letter's number lands; the letter lands too, but its write is answered with an error.
  storeGate.skip = 1;
  storeGate.mode = "lose";
  await clock.tick(8_000);
  expect(await first).toHaveProperty("error");
  expect(
    d.logs.filter((l) => String(l.msg).startsWith("outgoing webhook: could not keep a delivery")),
  ).toHaveLength(1);
  // The server's retry: its handler still runs, so it waits its own deadline and is kept then.
  const retry = postDelivery(sb, d.url, id);
  await expect
    .poll(() => d.logs.filter((l) => l.msg === "repeated delivery; answering as the first"))
    .toHaveLength(1);
  await clock.tick(8_000);
  expect(await retry).toEqual(noReply);
  expect(await d.daemon.letters.of("helper").list()).toMatchObject([
    { runningIn: expect.any(String), event: { message: { id } } },
  ]);
  gate.resolve();
  await expect.poll(() => d.daemon.letters.of("helper").list()).toEqual([]);
  expect(seen.runs).toBe(1);
  expect(replies(sb)).toHaveLength(1);
});

it("a kept delivery whose handler outlasts handler_timeout (its message not recorded as handled): its letter stays, and the next start runs it, its reply once", async () => {
  const gate = deferred(); // never opened: the first run hangs
  const { seen, definition } = slowBot(gate.promise, false, true);
  const { sb, d, clock, restart } = await setup(definition, { extra: "handler_timeout: 10s" });
  const id = quiet(sb, "timed out");
  const answer = postDelivery(sb, d.url, id);
  await expect.poll(() => seen.runs).toBe(1);
  await clock.tick(8_000);
  expect(await answer).toEqual(noReply);
  await clock.tick(2_000); // its handler_timeout: the queue moves on, the run is over for it
  await expect
    .poll(() =>
      d.logs.filter((l) => String(l.msg).includes("its dead letter stays, replayed at the next start")),
    )
    .toMatchObject([{ messageId: id }]);
  expect(await d.daemon.letters.of("helper").list()).toMatchObject([{ runningIn: expect.any(String) }]);
  const again = await restart();
  await expect.poll(() => again.daemon.letters.of("helper").list()).toEqual([]);
  expect(seen.runs).toBe(2);
  expect(replies(sb)).toHaveLength(1);
});

/** A bot whose handler replies "early", waits for `gate`, then replies "after" (through the API). */
function earlyBot(gate: Promise<void>) {
  const seen = { runs: 0 };
  const definition = webhookBot((b) =>
    b.on("message", async (ctx) => {
      seen.runs++;
      await ctx.reply("early");
      await gate;
      await ctx.reply("after");
    }),
  );
  return { seen, definition };
}

it("a delivery whose handler replies and goes on is kept before the reply goes in its answer, and gone once the handler returns", async () => {
  const gate = deferred();
  const { seen, definition } = earlyBot(gate.promise);
  const { sb, d } = await setup(definition);
  const id = quiet(sb, "early");
  // Answered with the reply while the handler waits: no deadline passed (the clock is held).
  expect(await postDelivery(sb, d.url, id)).toEqual({ status: 200, body: { content: "early" } });
  const letters = await d.daemon.letters.of("helper").list();
  expect(letters).toMatchObject([
    { source: "webhook", attempts: 0, runningIn: expect.any(String), event: { message: { id } } },
  ]);
  expect(letters[0]!.error.message).toContain("answered with its handler's reply");
  expect(d.logs.filter((l) => l.msg === KEPT_REPLIED_LINE)).toMatchObject([
    { messageId: id, deadLetter: letters[0]!.id },
  ]);
  gate.resolve();
  await expect.poll(() => d.daemon.letters.of("helper").list()).toEqual([]);
  expect(seen.runs).toBe(1);
  expect(sb.control.messages().filter((m) => m.content === "after")).toHaveLength(1);
});

it("a reply whose letter the store refuses goes in the answer all the same, said once", async () => {
  const gate = deferred();
  const { seen, definition } = earlyBot(gate.promise);
  const storeGate = new StoreGate();
  const { sb, d } = await setup(definition, {
    store: async (dir, clock) => {
      const files = await FileStore.open(dir, { now: () => clock.now() });
      return gatedBackend(files, ["helper", "dead-letters"], storeGate, { updates: true });
    },
  });
  const id = quiet(sb, "early refused");
  storeGate.mode = "fail";
  expect(await postDelivery(sb, d.url, id)).toEqual({ status: 200, body: { content: "early" } });
  storeGate.mode = "open";
  expect(
    d.logs.filter((l) =>
      String(l.msg).startsWith("outgoing webhook: could not keep a delivery whose handler replied"),
    ),
  ).toHaveLength(1);
  gate.resolve();
  await expect.poll(() => sb.control.messages().filter((m) => m.content === "after")).toHaveLength(1);
  expect(seen.runs).toBe(1);
});

/** The helper's letters go through `storeGate` (their number's update and the letter's write). */
const gatedLetters = (storeGate: StoreGate) => ({
  store: async (dir: string, clock: ManualClock) => {
    const files = await FileStore.open(dir, { now: () => clock.now() });
    return gatedBackend(files, ["helper", "dead-letters"], storeGate, { updates: true });
  },
});

it("a reply whose letter lands though its write is reported failed: the letter goes at the run's end all the same, never left as a failure", async () => {
  const gate = deferred();
  const { seen, definition } = earlyBot(gate.promise);
  const storeGate = new StoreGate();
  const { sb, d } = await setup(definition, gatedLetters(storeGate));
  const id = quiet(sb, "early lost ack");
  // The letter's number lands; the letter lands too, its write answered with an error.
  storeGate.skip = 1;
  storeGate.mode = "lose";
  expect(await postDelivery(sb, d.url, id)).toEqual({ status: 200, body: { content: "early" } });
  expect(storeGate.stopped).toBe(1);
  expect(
    d.logs.filter((l) =>
      String(l.msg).startsWith("outgoing webhook: could not keep a delivery whose handler replied"),
    ),
  ).toHaveLength(1);
  // The window: the reply went, the handler still runs, its letter is in the store.
  expect(await d.daemon.letters.of("helper").list()).toMatchObject([
    { runningIn: expect.any(String), event: { message: { id } } },
  ]);
  gate.resolve();
  await expect.poll(() => sb.control.messages().filter((m) => m.content === "after")).toHaveLength(1);
  await expect.poll(() => d.daemon.letters.of("helper").list()).toEqual([]);
  expect(seen.runs).toBe(1);
});

it("a delivery whose letter lands at the deadline though its write is reported failed, its run over before the server retries: the letter goes at the run's end, and the retry runs nothing", async () => {
  const gate = deferred();
  const { seen, definition } = slowBot(gate.promise);
  const storeGate = new StoreGate();
  const { sb, d, clock } = await setup(definition, gatedLetters(storeGate));
  const id = quiet(sb, "late lost ack");
  const first = postDelivery(sb, d.url, id);
  await expect.poll(() => seen.runs).toBe(1);
  storeGate.skip = 1;
  storeGate.mode = "lose";
  await clock.tick(8_000);
  expect(await first).toHaveProperty("error");
  expect(await d.daemon.letters.of("helper").list()).toMatchObject([
    { runningIn: expect.any(String), event: { message: { id } } },
  ]);
  gate.resolve();
  await expect.poll(() => replies(sb)).toHaveLength(1);
  await expect.poll(() => d.daemon.letters.of("helper").list()).toEqual([]);
  const status = await d.daemon.status();
  expect(status.bots[0]).toMatchObject({ deadLetters: 0 });
  // The server's retry, after the run: answered without a reply, nothing run again.
  expect(await postDelivery(sb, d.url, id)).toEqual(noReply);
  expect(seen.runs).toBe(1);
  expect(replies(sb)).toHaveLength(1);
});

it("a Slack-format delivery answered before a later lookup found its message is kept before it runs, as a Zulip-format one answered while it runs, and gone once its run is over", async () => {
  const gate = deferred();
  const { seen, definition } = slowBot(gate.promise);
  const { sb, d, clock } = await setup(definition, { iface: "slack" });
  // Every try of the first lookup fails: answered at once, the message looked up again later.
  sb.control.failNext(4, { status: 502, paths: [/^\/messages$/], methods: ["GET"] });
  const id = sb.control.sendAs(MEL, {
    type: "stream",
    to: "general",
    topic: "slack",
    content: "@**Helper** hi",
  }).id;
  await expect
    .poll(async () => {
      await clock.tick(500); // the client's retries and the later lookup's pause, on the test clock
      return seen.runs;
    })
    .toBe(1);
  const letters = await d.daemon.letters.of("helper").list();
  expect(letters).toMatchObject([
    { source: "webhook", attempts: 0, runningIn: expect.any(String), event: { message: { id } } },
  ]);
  expect(letters[0]!.error.message).toContain("before its message was found");
  expect(d.logs.filter((l) => l.msg === KEPT_ANSWERED_LINE)).toMatchObject([
    { messageId: id, deadLetter: letters[0]!.id },
  ]);
  expect((await d.daemon.status()).bots[0]).toMatchObject({ deadLetters: 0 });
  gate.resolve();
  await expect.poll(() => replies(sb)).toHaveLength(1);
  await expect.poll(() => d.daemon.letters.of("helper").list()).toEqual([]);
  expect(seen.runs).toBe(1);
});

it("a late reply over max_message_length whose answer was lost is found by the retry's read-back as the server cut it, not made again", async () => {
  // Past the deadline the reply goes through the API, which stores it cut to max_message_length
  // ending "\n[message truncated]": the read-back matches it so.
  const long = "x".repeat(10_050);
  const gate = deferred();
  let runs = 0;
  const definition = webhookBot((b) =>
    b.on("message", async (ctx) => {
      runs++;
      await gate.promise;
      await ctx.reply(long);
    }),
  );
  const { sb, d, clock } = await setup(definition, {
    extra: "retries: { attempts: 3, backoff: 50ms, max_backoff: 50ms }",
  });
  const answer = postDelivery(sb, d.url, quiet(sb, "long"));
  await expect.poll(() => runs).toBe(1);
  await clock.tick(8_000);
  expect(await answer).toEqual(noReply);
  sb.control.failNext(1, { status: 503, after: true, paths: [/^\/messages$/], methods: ["POST"] });
  gate.resolve();
  await expect
    .poll(async () => {
      await clock.tick(50);
      return runs === 2 && (await d.daemon.letters.of("helper").list()).length === 0;
    })
    .toBe(true);
  const fromHelper = sb.control.messages().filter((m) => String(m.content).startsWith("xxx"));
  expect(fromHelper.map((m) => m.content)).toEqual([`${"x".repeat(9_980)}\n[message truncated]`]);
});
