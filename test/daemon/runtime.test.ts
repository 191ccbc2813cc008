import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { type InProcessDaemon, startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";

const OWNER = "owner@sandbox.example";
const MEMBER = "member@sandbox.example";

function bot(setup: (bot: BotApi) => void, events?: string[]): BotDefinition<never, never> {
  return { ...(events ? { events } : {}), setup } as unknown as BotDefinition<never, never>;
}

/** A bot that records the id of every channel message it handles, and whether it was replayed. */
function recorder(seen: { id: number; replayed: boolean }[]) {
  return bot((b) => {
    b.on("message", (ctx) => {
      seen.push({ id: ctx.event.message.id, replayed: ctx.replayed });
    });
  });
}

let sandbox: Sandbox;
let harness: InProcessDaemon | undefined;

beforeEach(async () => {
  sandbox = await startSandbox({ heartbeatSeconds: 1 });
  sandbox.control.createUser({
    email: "echo-bot@sandbox.example",
    full_name: "Echo",
    bot: "generic",
    owner: OWNER,
  });
  sandbox.control.createUser({
    email: "counter-bot@sandbox.example",
    full_name: "Counter",
    bot: "generic",
    owner: OWNER,
    channels: ["general"],
  });
});

afterEach(async () => {
  await harness?.stop();
  harness = undefined;
  await sandbox.stop();
});

const send = (content: string, to = "general") =>
  sandbox.control.sendAs(MEMBER, { type: "stream", to, topic: "t", content }).id;

describe("the daemon against the sandbox", () => {
  it("runs several bots, each seeing only its own events, and replies", async () => {
    const counted: number[] = [];
    harness = await startInProcessDaemon(sandbox, {
      echo: {
        email: "echo-bot@sandbox.example",
        definition: bot((b) =>
          b.on("message", { direct: true }, (ctx) => ctx.reply(`echo: ${ctx.event.message.content}`)),
        ),
      },
      counter: {
        email: "counter-bot@sandbox.example",
        definition: bot((b) =>
          b.on("message", { channel: "general" }, (ctx) => void counted.push(ctx.event.message.id)),
        ),
      },
    });
    const dm = sandbox.control.sendAs(MEMBER, {
      type: "direct",
      to: ["echo-bot@sandbox.example"],
      content: "hi",
    }).id;
    const channelMessage = send("to the channel");
    const echoId = sandbox.control.users().find((u) => u.email === "echo-bot@sandbox.example")!.user_id;
    const memberId = sandbox.control.users().find((u) => u.email === MEMBER)!.user_id;
    const reply = await sandbox.control.waitFor(() =>
      sandbox.control.messages().find((m) => m.sender_id === echoId),
    );
    expect(reply).toMatchObject({
      content: "echo: hi",
      type: "private",
      dm_user_ids: [memberId, echoId].sort(),
    });
    await expect.poll(() => counted).toEqual([channelMessage]);
    // The echo bot is not subscribed to general and never saw it; the counter never saw the DM.
    expect(counted).not.toContain(dm);
    const echo = harness.daemon.bots.find((b) => b.name === "echo")!;
    await expect.poll(() => echo.status.handled).toBe(1);
    // Its own reply reached its queue and was dropped, not handled.
    const queue = sandbox.control.queues().find((q) => q.email === "echo-bot@sandbox.example");
    expect(queue?.event_types).toEqual(["message", "restart"]);
  });

  it("registers for every event type when a bot routes unknown events, and for none of its own gap", async () => {
    harness = await startInProcessDaemon(sandbox, {
      echo: {
        email: "echo-bot@sandbox.example",
        definition: bot((b) => {
          b.on("gap", () => {});
          b.on("unknown", () => {});
        }),
      },
      counter: {
        email: "counter-bot@sandbox.example",
        definition: bot((b) => b.on(["gap", "reaction"], () => {})),
      },
    });
    const typesOf = (email: string) => sandbox.control.queues().find((q) => q.email === email)?.event_types;
    await expect.poll(() => typesOf("echo-bot@sandbox.example")).toBeNull();
    expect(typesOf("counter-bot@sandbox.example")).toEqual(["reaction", "restart"]);
  });

  it("handles every message exactly once when the queue is garbage-collected mid-stream", async () => {
    const seen: { id: number; replayed: boolean }[] = [];
    harness = await startInProcessDaemon(sandbox, {
      counter: { email: "counter-bot@sandbox.example", definition: recorder(seen) },
    });
    const sent: number[] = [];
    for (let i = 0; i < 5; i++) sent.push(send(`before ${i}`));
    await expect.poll(() => seen.length).toBe(5);
    sandbox.control.expireQueue({ email: "counter-bot@sandbox.example" });
    for (let i = 0; i < 5; i++) sent.push(send(`during the gap ${i}`));
    await expect.poll(() => harness!.daemon.bots[0]!.status.registrations).toBe(2);
    for (let i = 0; i < 5; i++) sent.push(send(`after ${i}`));
    await expect.poll(() => seen.length).toBe(15);
    expect(seen.map((s) => s.id)).toEqual(sent);
    expect(seen.filter((s) => s.replayed).length).toBeGreaterThan(0);
    expect(
      harness.logs.some((l) => l.msg === "event queue expired on the server; registering a new one"),
    ).toBe(true);
  });

  it("stops a bot whose key is rejected while the others go on", async () => {
    const seen: { id: number; replayed: boolean }[] = [];
    const wrongKey = "A".repeat(32);
    harness = await startInProcessDaemon(sandbox, {
      broken: { email: "echo-bot@sandbox.example", apiKey: wrongKey, definition: recorder([]) },
      counter: { email: "counter-bot@sandbox.example", definition: recorder(seen) },
    });
    const id = send("still here");
    await expect.poll(() => seen.map((s) => s.id)).toEqual([id]);
    const broken = harness.daemon.bots.find((b) => b.name === "broken")!;
    expect(broken.status.state).toBe("auth_failed");
    const text = JSON.stringify(harness.logs);
    expect(text).toContain("authentication failed; this bot is stopped");
    expect(text).not.toContain(wrongKey);
    expect(text).not.toContain(sandbox.control.apiKeyOf("counter-bot@sandbox.example"));
  });

  it("a bot rejected while running gives the same way back in the status, /readyz and the log", async () => {
    harness = await startInProcessDaemon(
      sandbox,
      { echo: { email: "echo-bot@sandbox.example", definition: recorder([]) } },
      { global: "http:\n  listen: 127.0.0.1:0" },
    );
    const echo = harness.daemon.bots[0]!;
    await expect.poll(() => echo.status.state).toBe("polling");
    sandbox.control.setActive("echo-bot@sandbox.example", false);
    await expect.poll(() => echo.status.state).toBe("auth_failed");
    const reason = (await harness.daemon.status()).bots[0]?.reason;
    const ready = (await (await fetch(`${harness.daemon.http!.url}/readyz`)).json()) as {
      bots: { bot: string; reason?: string }[];
    };
    expect(ready.bots[0]?.reason).toBe(reason);
    const line = harness.logs.find((l) => l.msg === "authentication failed; this bot is stopped");
    expect(line?.fix).toBe(reason);
  });

  it("survives 5xx bursts, non-JSON 502s, 429s and connection resets without loss or duplicates", async () => {
    const seen: { id: number; replayed: boolean }[] = [];
    harness = await startInProcessDaemon(sandbox, {
      counter: { email: "counter-bot@sandbox.example", definition: recorder(seen) },
    });
    const sent: number[] = [send("first")];
    await expect.poll(() => seen.length).toBe(1);
    sandbox.control.failNext(3, { status: 503, paths: ["/events"] });
    sent.push(send("after 503s"));
    await expect.poll(() => seen.length).toBe(2);
    sandbox.control.failNext(2, { status: 502, nonJson: true, paths: ["/events"] });
    sent.push(send("after 502 pages"));
    await expect.poll(() => seen.length).toBe(3);
    sandbox.control.rateLimitNext(2, 0.05);
    sent.push(send("after 429s"));
    await expect.poll(() => seen.length).toBe(4);
    sandbox.control.resetConnections(2);
    sent.push(send("after resets"));
    await expect.poll(() => seen.length).toBe(5);
    expect(seen.map((s) => s.id)).toEqual(sent);
    const statuses = sandbox.control.requests.filter((r) => r.path === "/events").map((r) => r.status);
    expect(statuses).toEqual(expect.arrayContaining([503, 502, 429, -1]));
  });

  it("deletes its queues on graceful shutdown", async () => {
    harness = await startInProcessDaemon(sandbox, {
      counter: { email: "counter-bot@sandbox.example", definition: recorder([]) },
      echo: { email: "echo-bot@sandbox.example", definition: recorder([]) },
    });
    expect(sandbox.control.queues()).toHaveLength(2);
    // Before: each start's server check deletes the queue it registered to read the server's identity.
    const before = sandbox.control.requests.length;
    await harness.stop();
    harness = undefined;
    expect(sandbox.control.queues()).toHaveLength(0);
    expect(
      sandbox.control.requests.slice(before).filter((r) => r.method === "DELETE" && r.path === "/events"),
    ).toHaveLength(2);
  });

  it("replays messages sent while the daemon was down, after a restart on the same state", async () => {
    const seen: { id: number; replayed: boolean }[] = [];
    const { mkdtemp } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const stateDir = await mkdtemp(`${tmpdir()}/bothost-restart-`);
    const bots = { counter: { email: "counter-bot@sandbox.example", definition: recorder(seen) } };
    harness = await startInProcessDaemon(sandbox, bots, { stateDir });
    const first = send("before the restart");
    await expect.poll(() => seen.length).toBe(1);
    await harness.stop();
    const missed = [send("while down 1"), send("while down 2")];
    harness = await startInProcessDaemon(sandbox, bots, { stateDir });
    await expect.poll(() => seen.length).toBe(3);
    expect(seen).toEqual([
      { id: first, replayed: false },
      { id: missed[0], replayed: true },
      { id: missed[1], replayed: true },
    ]);
  });
});
