/**
 * A sandbox stopped and started again on the same data file keeps its event queues, as the server
 * dumps its queues on a stop and loads them back: the same queue id answers, with the events not
 * yet acknowledged and a `restart` event; a queue that was idle past its lifetime meanwhile is
 * collected (BAD_EVENT_QUEUE_ID), as the server's next collection does.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, vi } from "vitest";
import { expect, fixtureFor, MEMBER, OWNER, recordingSandbox, test } from "../support/sandbox/fixture.ts";

const opened: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of opened.splice(0).reverse()) await close();
});

async function registeredThenStopped(eventTypes: string[]) {
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-sandbox-restart-"));
  opened.push(() => rm(dir, { recursive: true, force: true }));
  const dataFile = path.join(dir, "data.json");
  const first = await recordingSandbox({ dataFile });
  const sb = fixtureFor(first);
  const queue = await sb.as(OWNER).register({ event_types: JSON.stringify(eventTypes) });
  const sent = await sb.as(MEMBER).post("/messages", {
    type: "direct",
    to: JSON.stringify([sandboxUserId(first, OWNER)]),
    content: "sent before the restart",
  });
  expect(sent.status).toBe(200);
  await first.stop();
  return {
    dataFile,
    queueId: queue.queue_id as string,
    lastEventId: queue.last_event_id as number,
    featureLevel: queue.zulip_feature_level as number,
  };
}

function sandboxUserId(sandbox: Awaited<ReturnType<typeof recordingSandbox>>, email: string): number {
  return sandbox.control.users().find((u) => u.email === email)!.user_id;
}

test("a queue survives a stop and start on the same data file, with its events and a restart event", async () => {
  const { dataFile, queueId, lastEventId, featureLevel } = await registeredThenStopped([
    "message",
    "restart",
  ]);
  const second = await recordingSandbox({ dataFile });
  opened.push(() => second.stop());
  const poll = await fixtureFor(second)
    .as(OWNER)
    .get("/events", { queue_id: queueId, last_event_id: String(lastEventId), dont_block: "true" });
  expect(poll.status).toBe(200);
  const events = poll.body.events as { type: string; id: number; message?: { content: string } }[];
  expect(events.map((e) => e.type)).toEqual(["message", "restart"]);
  expect(events[0]!.message!.content).toBe("sent before the restart");
  expect(events[1]).toMatchObject({ id: 1, zulip_feature_level: featureLevel });
});

test("a queue that does not take restart events gets none, and keeps its events", async () => {
  const { dataFile, queueId, lastEventId } = await registeredThenStopped(["message"]);
  const second = await recordingSandbox({ dataFile });
  opened.push(() => second.stop());
  const poll = await fixtureFor(second)
    .as(OWNER)
    .get("/events", { queue_id: queueId, last_event_id: String(lastEventId), dont_block: "true" });
  expect((poll.body.events as { type: string }[]).map((e) => e.type)).toEqual(["message"]);
});

test("a queue whose poll was parked at the stop survives too", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-sandbox-restart-"));
  opened.push(() => rm(dir, { recursive: true, force: true }));
  const dataFile = path.join(dir, "data.json");
  const first = await recordingSandbox({ dataFile });
  const owner = fixtureFor(first).as(OWNER);
  const queue = await owner.register({ event_types: JSON.stringify(["message", "restart"]) });
  const queueId = queue.queue_id as string;
  const parked = owner.get("/events", { queue_id: queueId, last_event_id: String(queue.last_event_id) });
  await first.control.waitFor(() => first.control.queues().find((q) => q.queue_id === queueId)?.parked);
  // Answering the parked poll is a change of its own: a deferred write of it (its timer run at
  // once here) must not write the data over the stop's, which holds the queues.
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  try {
    await first.stop();
    await parked.catch(() => undefined);
    vi.runAllTimers();
  } finally {
    vi.useRealTimers();
  }
  const second = await recordingSandbox({ dataFile });
  opened.push(() => second.stop());
  const poll = await fixtureFor(second)
    .as(OWNER)
    .get("/events", { queue_id: queueId, last_event_id: String(queue.last_event_id), dont_block: "true" });
  expect(poll.status).toBe(200);
  expect((poll.body.events as { type: string }[]).map((e) => e.type)).toEqual(["restart"]);
});

test("a queue idle past its lifetime while the sandbox was down is collected", async () => {
  const { dataFile, queueId, lastEventId } = await registeredThenStopped(["message", "restart"]);
  // Started eleven minutes later by its clock: the queue was last connected at its registration.
  const later = Date.now() + 11 * 60_000;
  const second = await recordingSandbox({ dataFile, clock: { now: () => later } });
  opened.push(() => second.stop());
  second.control.advanceClock(0);
  const poll = await fixtureFor(second)
    .as(OWNER)
    .get("/events", { queue_id: queueId, last_event_id: String(lastEventId), dont_block: "true" });
  expect(poll.status).toBe(400);
  expect(poll.body).toMatchObject({ code: "BAD_EVENT_QUEUE_ID", queue_id: queueId });
});
