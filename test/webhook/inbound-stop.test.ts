/**
 * A daemon's stop with inbound webhook requests in flight: the listener takes no new request, but
 * one in flight is answered before the bots stop, its handler not interrupted (its send made, 200).
 * One still running when the stop's deadline passes is cut off (ROUTER_ABORTED) and answered 503,
 * to be sent again: its retry runs the handler again at the next start. Before, the listener's
 * close aborted every handler at once, answered 500 "the webhook handler timed out".
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { type RunningDaemon, startDaemon } from "../support/http-daemon.ts";

const BOT = "hooks-bot@sandbox.example";
let sandbox: Sandbox;
let stateDir: string;
/** Each run of a handler, by webhook and idempotency key. */
const runs: string[] = [];
/** Released by the test: the "slow" handler waits for it. */
let release: () => void = () => {};
let entered: () => void = () => {};
/** The "stuck" handler waits for its signal alone while this is true. */
let stuck = true;

function hooks(b: BotApi): void {
  b.webhook("slow", { verify: { type: "none" }, idempotencyHeader: "X-Id" }, async (ctx) => {
    runs.push(`slow ${ctx.request.idempotencyKey}`);
    entered();
    await new Promise<void>((r) => {
      release = r;
    });
    const { id } = await ctx.send({ type: "channel", to: "general", topic: "hooks", content: "slow done" });
    return { posted: id };
  });
  b.webhook("stuck", { verify: { type: "none" }, idempotencyHeader: "X-Id" }, async (ctx) => {
    runs.push(`stuck ${ctx.request.idempotencyKey}`);
    entered();
    if (stuck)
      await new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
    return { ok: true };
  });
}

const bots = {
  hooks: { email: BOT, definition: { setup: hooks } as unknown as BotDefinition<never, never> },
};

beforeAll(async () => {
  sandbox = await startSandbox({ heartbeatSeconds: 1 });
  sandbox.control.createUser({
    email: BOT,
    full_name: "Hooks",
    bot: "generic",
    owner: "owner@sandbox.example",
    channels: ["general"],
  });
  stateDir = await mkdtemp(path.join(tmpdir(), "bothost-inbound-stop-"));
});
afterAll(async () => {
  await sandbox.stop();
  await rm(stateDir, { recursive: true, force: true });
});

/** POST a webhook with idempotency key `id`, once its handler has begun (`begun` resolves then). */
function post(running: RunningDaemon, hook: string, id: string) {
  const begun = new Promise<void>((r) => {
    entered = r;
  });
  const answer = request(`${running.url}/webhooks/hooks/${hook}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-id": id },
    body: "{}",
  }).then(async (res) => ({
    status: res.statusCode,
    retryAfter: res.headers["retry-after"],
    connection: res.headers.connection,
    body: await res.body.json(),
  }));
  return { begun, answer };
}

it("a request in flight is answered before the bots stop, its handler not interrupted", async () => {
  const running = await startDaemon(sandbox, bots, { stateDir });
  const { begun, answer } = post(running, "slow", "a1");
  await begun;
  let over = false;
  const stopped = running.stop().then(() => {
    over = true;
  });
  // Once the listener is closed (a new request no longer connects), the stop still waits for the
  // request in flight: the handler is still running, and its send goes out.
  const connects = () =>
    request(`${running.url}/healthz`).then(
      (res) => res.body.dump().then(() => true),
      () => false,
    );
  await expect.poll(connects).toBe(false);
  expect(over).toBe(false);
  release();
  const answered = await answer;
  expect(answered).toMatchObject({ status: 200, body: { posted: expect.any(Number) } });
  await stopped;
  const posted = (answered.body as { posted: number }).posted;
  expect(sandbox.control.messages().find((m) => m.id === posted)?.content).toBe("slow done");
  expect(running.logs.filter((l) => /webhook handler/.test(String(l.msg)))).toEqual([]);
});

it("one still running at the stop's deadline is answered 503 and runs again when sent again", async () => {
  const running = await startDaemon(sandbox, bots, { stateDir });
  const { begun, answer } = post(running, "stuck", "b1");
  await begun;
  const stopped = running.daemon.stop({ deadlineMs: 300 });
  expect(await answer).toEqual({
    status: 503,
    retryAfter: "30",
    connection: "close",
    body: { error: "the daemon stopped before the webhook handler finished; try again" },
  });
  await stopped;
  expect(
    running.logs.filter((l) => /webhook handler/.test(String(l.msg))).map((l) => [l.level, l.msg]),
  ).toEqual([[40, "webhook handler cut short by the shutdown's deadline: answered 503, to be sent again"]]);

  stuck = false;
  const again = await startDaemon(sandbox, bots, { stateDir });
  try {
    const retried = post(again, "stuck", "b1");
    expect(await retried.answer).toMatchObject({ status: 200, body: { ok: true } });
    expect(runs.filter((r) => r === "stuck b1")).toHaveLength(2);
  } finally {
    await again.stop();
  }
});
