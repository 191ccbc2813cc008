/**
 * Why the queue consumer acknowledges what it received, not only what its handlers finished: on
 * the server, a poll whose `last_event_id` leaves an event unacknowledged is answered at once with
 * that event again, and only a parked poll keeps a queue alive (docs/internals/server-behaviour.md
 * #the-event-queue). A queue holding an unacknowledged event is therefore dropped 600 s after its
 * last parked poll, however often it is polled meanwhile.
 */
import { openQueue } from "../support/sandbox/events.ts";
import { BOT, expect, MEMBER, test } from "../support/sandbox/fixture.ts";

test("a poll that leaves an event unacknowledged is answered at once, and does not keep the queue alive", async ({
  sb,
}) => {
  const bot = sb.as(BOT);
  const q = await openQueue(bot, { event_types: ["message", "reaction"] });
  const sent = sb.sandbox.control.sendAs(MEMBER, {
    type: "stream",
    to: "general",
    topic: "t",
    content: "hi",
  });
  const react = await sb.as(MEMBER).post(`/messages/${sent.id}/reactions`, { emoji_name: "tada" });
  expect(react.status, react.text).toBe(200);
  const polls: number[][] = [];
  // Ten polls without dont_block, each acknowledging only the message (event 0): none parks.
  for (let minute = 0; minute < 10; minute++) {
    const reply = await bot.get("/events", { queue_id: q.id, last_event_id: 0 });
    expect(reply.status, reply.text).toBe(200);
    polls.push((reply.body.events as { id: number }[]).map((e) => e.id));
    sb.sandbox.control.advanceClock(60_000);
  }
  expect(polls).toEqual(Array.from({ length: 10 }, () => [1]));
  const after = await bot.get("/events", { queue_id: q.id, last_event_id: 0 });
  expect(after.status).toBe(400);
  expect(after.body.code).toBe("BAD_EVENT_QUEUE_ID");
});
