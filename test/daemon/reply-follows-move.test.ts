/**
 * A reply follows the message it answers where it was moved while the handler worked (a topic
 * resolved or renamed, moved to another channel): a reply made 5 s or more after the handler
 * began reads where the message is now (one GET /messages) and goes there; a quick one reads
 * nothing. A reply whose send failed with its answer lost, run again after the move, is looked
 * for where it went and not sent twice.
 */
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import { defineBot } from "../../src/bot/define-bot.ts";
import type { InProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const MEMBER = "member@sandbox.example";
const OWNER = "owner@sandbox.example";
const BOT = "slow-bot@sandbox.example";

const world = useSandbox({ bots: { [BOT]: "Slow" } });

/** A bot that replies to the member once the test lets it. */
function slowBot(gate: Promise<void>) {
  return defineBot({
    setup(bot) {
      bot.on("message", { sender: MEMBER }, async (ctx) => {
        await gate;
        await ctx.reply(`done: ${ctx.text}`);
      });
    },
  });
}

/** `hang`: the bot's poll after the message is held, so no event (its own sends' included) reaches it. */
async function setUp(extra = "", hang = false) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const clock = new ManualClock(Date.now());
  const running: InProcessDaemon = await world.daemon(
    { slow: { email: BOT, definition: slowBot(gate), extra } },
    { clock },
  );
  const { sandbox } = world;
  const owner = createClient({
    url: sandbox.url,
    email: OWNER,
    apiKey: sandbox.control.apiKeyOf(OWNER),
    rateLimit: false,
  });
  if (hang) {
    // Once its poll is parked: the one after it (the message's) is held, with every event after.
    const parked = () => sandbox.control.queues().some((q) => q.email === BOT && q.parked);
    await sandbox.control.waitFor(parked);
    sandbox.control.delay(600_000, { paths: ["/events"] });
  }
  const id = sandbox.control.sendAs(MEMBER, {
    type: "stream",
    to: "general",
    topic: "help",
    content: "slow",
  }).id;
  const general = (await owner.channels.id("general")).stream_id;
  const reads = () =>
    sandbox.control.requests.filter((r) => r.method === "GET" && r.path === "/messages").length;
  const replies = () =>
    world.messagesFrom(BOT).map((m) => ({ topic: m.subject ?? m.topic, content: String(m.content) }));
  // The handler has begun once the bot has the message in hand: its queue delivered it.
  await expect.poll(() => running.daemon.bots[0]?.status.inFlight).toBe(1);
  return { running, clock, open, owner, id, general, reads, replies };
}

describe("a reply to a message moved while the handler worked", () => {
  it.each([
    ["after 5 s, goes where the message is now (the topic resolved), one read", 5_000, "✔ help", 1],
    ["within 5 s, goes where the message was, with no read", 1_000, "help", 0],
  ] as const)("%s", async (_name, after, topic, reads) => {
    const { clock, open, owner, id, general, reads: readsNow, replies } = await setUp();
    await owner.messages.update(id, { topic: "✔ help", propagate_mode: "change_all", stream_id: general });
    const before = readsNow();
    await clock.tick(after);
    open();
    await expect.poll(replies).toEqual([{ topic, content: "done: slow" }]);
    expect(readsNow() - before).toBe(reads);
  });

  it("a send stored with its answer lost, run again: found where it went, not sent twice", async () => {
    const retries = "retries: { attempts: 3, backoff: 50ms, max_backoff: 100ms }";
    const { running, clock, open, owner, id, general, replies } = await setUp(retries, true);
    await owner.messages.update(id, { topic: "✔ help", propagate_mode: "change_all", stream_id: general });
    // The send is stored and its answer lost; its own message event does not come (the bot's
    // poll hangs), so the send counts as failed and the handler runs again.
    world.sandbox.control.failNext(1, { status: 502, after: true, paths: ["/messages"], methods: ["POST"] });
    await clock.tick(5_000);
    open();
    // Through the wait for a local echo and the retry's pause.
    await expect
      .poll(async () => {
        await clock.tick(500);
        return running.daemon.bots[0]?.status.inFlight;
      })
      .toBe(0);
    world.sandbox.control.delay(0);
    expect(replies()).toEqual([{ topic: "✔ help", content: "done: slow" }]);
    // Run again once: the send, its answer lost, was found made.
    expect(
      running.logs.filter((l) => l.msg === "handler failed; running it again after a pause"),
    ).toHaveLength(1);
  });
});
