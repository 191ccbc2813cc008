/**
 * A bot's runtime comes back to an instance that stopped it (a lease lost, then won again): it
 * starts again, replays what it missed, keeps its booking, and a halt that lands while a start is
 * still registering makes that start give up. Asked to start again while started (a reload and a
 * lease round both starting a bot won meanwhile), it keeps its one event queue.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import { BotSwitch } from "../../src/cluster/bot-switch.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { type InProcessDaemon, startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { bookings } from "../support/cluster.ts";

const BOT = "herald-bot@sandbox.example";
const MEMBER = "member@sandbox.example";

let sandbox: Sandbox;
let harness: InProcessDaemon | undefined;
const seen: { id: number; replayed: boolean }[] = [];

const definition = {
  events: ["message"],
  setup(bot: BotApi) {
    bot.recurring("daily", {
      cron: "0 9 * * *",
      timezone: "UTC",
      to: "general",
      topic: "daily",
      content: "Daily restart note",
    });
    bot.on("message", (ctx) => {
      seen.push({ id: ctx.event.message.id, replayed: ctx.replayed });
    });
  },
} as unknown as BotDefinition<never, never>;

beforeEach(async () => {
  seen.length = 0;
  sandbox = await startSandbox({ heartbeatSeconds: 1 });
  sandbox.control.createUser({
    email: BOT,
    full_name: "Herald",
    bot: "generic",
    owner: "owner@sandbox.example",
    channels: ["general"],
  });
  harness = await startInProcessDaemon(sandbox, { herald: { email: BOT, definition } });
});
afterEach(async () => {
  sandbox.control.delay(0);
  await harness?.stop();
  harness = undefined;
  await sandbox.stop();
});

const send = (content: string) =>
  sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content }).id;
const handled = (id: number) => seen.filter((s) => s.id === id);

describe("a runtime started again after stop()", () => {
  it("replays the messages sent while it was stopped, then goes on; its booking stays the one", async () => {
    const runtime = harness!.daemon.bots[0]!;
    await expect.poll(() => bookings(sandbox, "Daily restart note").pending).toBe(1);
    const m1 = send("one");
    await expect.poll(() => handled(m1).length).toBe(1);

    await runtime.stop(1_000);
    expect(runtime.status.state).toBe("stopped");
    const m2 = send("two, while stopped");
    await runtime.start();
    await expect.poll(() => handled(m2)).toEqual([{ id: m2, replayed: true }]);
    const m3 = send("three");
    await expect.poll(() => handled(m3)).toEqual([{ id: m3, replayed: false }]);
    expect(runtime.status.state).toBe("polling");
    expect(seen.map((s) => s.id)).toEqual([m1, m2, m3]);
    expect(bookings(sandbox, "Daily restart note")).toEqual({ pending: 1, created: 1 });
  });

  it("gives a start up when a halt lands while it registers; the next start runs", async () => {
    const runtime = harness!.daemon.bots[0]!;
    const sw = new BotSwitch(runtime);
    await sw.halt(1_000);
    expect(runtime.status.state).toBe("standby");

    // The registration is held (until the delay is cleared) while the halt lands.
    sandbox.control.delay(60_000, { paths: ["/register"] });
    const starting = sw.start();
    await sandbox.control.waitFor(() => sandbox.control.delayed() === 1);
    expect(runtime.status.state).toBe("registering");
    await sw.halt(500);
    expect(await starting).toBe("halted");
    expect(runtime.status.state).toBe("standby");

    sandbox.control.delay(0);
    expect(await sw.start()).toBe("started");
    expect(runtime.status.state).toBe("polling");
    const m = send("after the restart");
    await expect.poll(() => handled(m).length).toBe(1);
  });

  it("starts once when asked twice (a reload and a lease round both starting a bot won meanwhile)", async () => {
    const runtime = harness!.daemon.bots[0]!;
    const sw = new BotSwitch(runtime);
    await sw.halt(1_000);
    const queues = () => sandbox.control.queues().filter((q) => q.email === BOT);
    expect(queues()).toHaveLength(0);

    // The second start comes while the first registers, the third once it polls.
    sandbox.control.delay(60_000, { paths: ["/register"] });
    const first = sw.start();
    await sandbox.control.waitFor(() => sandbox.control.delayed() === 1);
    const second = sw.start();
    sandbox.control.delay(0);
    const third = await Promise.all([first, second]).then(() => sw.start());
    expect(queues()).toHaveLength(1);
    expect([await first, await second, third]).toEqual(["started", "started", "started"]);
    expect(runtime.status.state).toBe("polling");
    const m = send("after the double start");
    await expect.poll(() => handled(m).length).toBe(1);
    // Stopped once, the bot has no queue left behind.
    await sw.halt(1_000);
    expect(queues()).toHaveLength(0);
  });
});
