/**
 * A scheduled message the sandbox sends is in its data file before the poll that hands it out
 * answers: a sandbox killed right after that answer (`bothost sandbox --data` under kill -9) still
 * has the message, and gives its id to no other. The sandbox's clock is moved to the delivery
 * minute instead of waiting for it; the file is read as the poll's answer arrives, before the
 * sandbox's own deferred write (200 ms later) could have made it.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach } from "vitest";
import { expect, fixtureFor, MEMBER, OWNER, recordingSandbox, test } from "../support/sandbox/fixture.ts";

const opened: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of opened.splice(0).reverse()) await close();
});

test("a scheduled message sent is in the data file when the poll carrying it answers", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-sandbox-poll-"));
  opened.push(() => rm(dir, { recursive: true, force: true }));
  const dataFile = path.join(dir, "data.json");
  const sandbox = await recordingSandbox({ dataFile });
  opened.push(() => sandbox.stop());
  const sb = fixtureFor(sandbox);
  const reader = sb.as(OWNER);
  const queue = await reader.register({ event_types: JSON.stringify(["message"]) });
  const ownerId = (await reader.get("/users/me")).body.user_id as number;
  // Scheduled messages go out at whole minutes of the sandbox's clock: the next one at least 5 s away.
  const now = sandbox.control.now();
  const at = Math.ceil((now / 1000 + 5) / 60) * 60;
  const booked = await sb.as(MEMBER).post("/scheduled_messages", {
    type: "direct",
    to: JSON.stringify([ownerId]),
    content: "sent while booked",
    scheduled_delivery_timestamp: String(at),
  });
  expect(booked.status).toBe(200);
  const poll = reader.get("/events", {
    queue_id: queue.queue_id as string,
    last_event_id: String(queue.last_event_id),
  });
  sandbox.control.advanceClock(at * 1000 - now + 1_000);
  const events = (await poll).body.events as { type: string; message?: { id: number } }[];
  const kept = JSON.parse(await readFile(dataFile, "utf8")) as {
    messages: { id: number; content: string }[];
  };
  const sent = events.find((e) => e.type === "message")?.message;
  expect(sent).toBeDefined();
  expect(kept.messages.filter((m) => m.id === sent!.id).map((m) => m.content)).toEqual(["sent while booked"]);
});
