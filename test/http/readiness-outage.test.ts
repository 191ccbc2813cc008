/**
 * `/readyz` and the status through a chat-server outage: a bot is not ready from its first failed
 * poll until the server answers one again, also while the poll sent again after the backoff is
 * under way (an orchestrator reading it during an outage must not see the bot flip back to
 * ready at each attempt), unless that poll stays parked past a grace, as a live server keeps it. A daemon in this process against the sandbox over HTTP, on a held test
 * clock (the backoff ends only where the test moves it).
 */
import { request } from "undici";
import { afterEach, expect, it } from "vitest";
import { TestClock } from "../../src/testing/test-clock.ts";
import { closeGatedDaemon, type GatedDaemon } from "../support/gated-daemon.ts";
import { startTally } from "../support/tally-bot.ts";

let up: GatedDaemon | undefined;
afterEach(async () => {
  up?.sandbox.control.delay(0);
  await closeGatedDaemon(up);
  up = undefined;
});

/** `expect.poll` with 15 s of real time: the clock and the sandbox decide; the bound is for a loaded machine. */
const poll = <T>(value: () => T | Promise<T>) => expect.poll(value, { timeout: 15_000 });

async function get(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await request(`${up!.running.daemon.http!.url}${path}`);
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

const failedPolls = () =>
  up!.sandbox.control.requests.filter((r) => r.path === "/events" && r.status === 503).length;

/** A ready daemon whose next poll the server fails (a message ends the parked one, the next gets a 503). */
async function failOnePoll(): Promise<GatedDaemon> {
  up = await startTally(new TestClock({ held: true }));
  await poll(async () => (await get("/readyz")).status).toBe(200);
  up.sandbox.control.failNext(1, { status: 503, paths: ["/events"] });
  up.dm("one");
  await poll(failedPolls).toBe(1);
  return up;
}

/** The backoff ends and the poll goes out again, but the server holds it unanswered. */
async function holdRetry({ sandbox, clock }: GatedDaemon): Promise<void> {
  sandbox.control.delay(600_000, { paths: ["/events"] });
  await clock.advance(1_000);
  await poll(() => sandbox.control.delayed()).toBe(1);
}

it("stays not ready while the poll sent again after a failure waits for the server, ready once it answers", async () => {
  const retrying = {
    ready: false,
    state: "backing_off",
    reason: "the event queue failed; retrying with backoff",
  };
  // After the 503, during the backoff...
  const daemon = await failOnePoll();
  expect((await get("/readyz")).body).toMatchObject({ ready: false, bots: [retrying] });
  // ...and while the poll sent again after it waits for the server.
  await holdRetry(daemon);
  const during = await get("/readyz");
  expect(during.status).toBe(503);
  expect(during.body).toMatchObject({ ready: false, bots: [retrying] });
  const status = await get("/admin/status");
  expect(status.body).toMatchObject({ bots: [{ name: "tally", state: "retrying" }] });

  // The server answers the poll (a message arrives): ready again.
  daemon.sandbox.control.delay(0);
  daemon.dm("two");
  await poll(async () => (await get("/readyz")).status).toBe(200);
  expect((await get("/readyz")).body).toMatchObject({ ready: true, bots: [{ state: "polling" }] });
});

it("counts a poll sent again that a live server keeps parked past the grace as answered", async () => {
  const daemon = await failOnePoll();
  const { clock } = daemon;
  // The retry is held (as a server parks a poll with nothing to send): not ready for 15 s...
  await holdRetry(daemon);
  await clock.advance(13_000);
  expect((await get("/readyz")).status).toBe(503);
  // ...then taken as parked by a live server: ready, with no heartbeat needed first.
  await clock.advance(2_000);
  expect((await get("/readyz")).body).toMatchObject({ ready: true, bots: [{ state: "polling" }] });
});
