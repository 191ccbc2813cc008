/**
 * A dialog's question stored by the server with its answer lost (502 after acting, its echo held
 * back), the run failed, and the code rewording the question before the next attempt: the read-back
 * of that attempt finds the question by the words it was first sent with, though they ended in
 * whitespace the server stripped. A real daemon in this process against the sandbox over HTTP, on a
 * test clock that stands still between the test's moves.
 */
import { afterEach, expect, it, vi } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { ECHO_WAIT_MS } from "../../src/effects/local-echo.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { type InProcessDaemon, startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { saidAtLeast } from "../support/self-killing-bot.ts";

const BOT = "size-bot@sandbox.example";
const MEMBER = "member@sandbox.example";

/** The question as the code words it on this attempt. */
let wording = "";
const sizes = defineBot({
  setup(bot) {
    bot.command("size", async (ctx) => {
      const size = await ctx.prompt(wording);
      await ctx.reply(`ok: ${size.text}`);
    });
  },
});

let sandbox: Sandbox | undefined;
let running: InProcessDaemon | undefined;
afterEach(async () => {
  await running?.stop({ deadlineMs: 0 });
  await sandbox?.stop();
});

const waitFor = <T>(check: () => T | Promise<T>) => vi.waitFor(check, { timeout: 15_000 });

it.each([
  ["no whitespace to strip", "Which size?"],
  ["a trailing space", "Which size? "],
  ["leading blank lines and a trailing newline", "\n\nWhich size?\n"],
])(
  "a question sent with %s, its answer lost, reworded before the next attempt: asked once",
  async (_, first) => {
    const clock = new TestClock({ held: true });
    sandbox = await startSandbox({ clock });
    const { control } = sandbox;
    control.createUser({ email: BOT, full_name: "Sizes", bot: "generic", owner: "owner@sandbox.example" });
    running = await startInProcessDaemon(
      sandbox,
      { sizes: { email: BOT, definition: sizes, extra: "retries: { attempts: 2, backoff: 10ms }" } },
      { clock },
    );
    const dm = (content: string) => control.sendAs(MEMBER, { type: "direct", to: [BOT], content });
    const botQueue = () => control.queues().filter((q) => q.email === BOT);
    const drained = () =>
      waitFor(() => expect(botQueue()).toMatchObject([{ pending_events: 0, parked: true }]));

    wording = first;
    control.failNext(1, { status: 502, after: true, paths: [/^\/messages$/], methods: ["POST"] });
    await drained();
    // The question's own message event (its echo) is held back: the lost answer stays unproven.
    control.delay(600_000, { paths: [/^\/events$/] });
    dm("size");
    expect(await saidAtLeast(sandbox, BOT, 1)).toEqual(["Which size?"]);
    await waitFor(() => expect(clock.pendingDelays()).toContain(ECHO_WAIT_MS));
    wording = "Which size would you like?";
    // The echo's wait ends, the attempt fails; the next one, after its pause, reads the question back.
    await clock.advance(ECHO_WAIT_MS);
    await waitFor(() => expect(clock.pendingDelays()).toContain(10));
    await clock.advance(10);
    await waitFor(() => expect(running!.daemon.bots[0]!.dialogs().map((d) => d.step)).toEqual([1]));
    control.delay(0);
    await drained();
    dm("large");
    expect(await saidAtLeast(sandbox, BOT, 2)).toEqual(["Which size?", "ok: large"]);
  },
);
