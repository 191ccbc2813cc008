/**
 * A progress whose work outlasts its `finalAfterMs` (test/fixtures/e2e/progress-late.mjs) under
 * `bothost run`, killed (kill -9) right after its final text was posted as a new message, before
 * that post's record was written (crash point `progress-posted`, its second post). Started again
 * on the same state, the handler runs again from its first step: its edits take the numbers of
 * the steps the earlier run made, the unrecorded post's among them, and its final post still
 * looks for that one first: the final text shows once, the progress message points at it. So
 * too when the run again is killed in turn after such an edit (its second): the edit's record
 * keeps the doubt for the third run.
 */
import { describe, it } from "vitest";
import { crashBackends } from "../support/crash-backends.ts";
import { botEmail, MEMBER, orgWithBots } from "../support/e2e-daemon.ts";
import { postedBy, shippedBot, useShippedBots } from "../support/shipped-bot.ts";

// The cases run at once: most of each is the handler's steps, a second apart, in a sandbox, a
// state and daemons of its own.
useShippedBots("all");

const FINAL = "Built: 3 steps.";
const BOT = botEmail(0);
const backends = await crashBackends("progress-final-crash");

describe.concurrent.each(backends)("%s", (_name, backend) => {
  it.for<[string, number]>([
    ["", 0],
    [", the run again killed after its second edit", 2],
  ])(
    "killed after the final post, before its record%s: the final text is posted once",
    {
      timeout: 40_000,
    },
    async ([, editsThenKill], { expect }) => {
      const bot = await shippedBot({
        org: orgWithBots(1),
        name: "progress",
        module: "../test/fixtures/e2e/progress-late.mjs",
        email: BOT,
        settings: [],
        state: (dir) => backend(dir).yaml,
      });
      const { control } = bot.sandbox;
      const daemon = await bot.start({ BOTHOST_FAILPOINTS: "progress-posted@2" });
      control.sendAs(MEMBER, { type: "direct", to: [BOT], content: "build" });
      expect(await daemon.exited).toEqual({ code: null, signal: "SIGKILL" });
      expect(postedBy(bot.sandbox, BOT)).toEqual(["Building… step 3 of 3", FINAL]);
      let again = await bot.start();
      if (editsThenKill > 0) {
        let edits = 0;
        const killed = again;
        bot.onResponse = (r) => {
          if (r.method !== "PATCH" || ++edits < editsThenKill) return;
          bot.onResponse = undefined;
          killed.kill("SIGKILL");
        };
        expect(await killed.exited).toEqual({ code: null, signal: "SIGKILL" });
        again = await bot.start();
      }
      const moved = "(finished: see below)";
      await control.waitFor(() => postedBy(bot.sandbox, BOT)[0] === moved, { timeoutMs: 20_000 });
      expect(postedBy(bot.sandbox, BOT)).toEqual([moved, FINAL]);
      again.kill("SIGTERM");
      expect(await again.exited).toEqual({ code: 0, signal: null });
    },
  );
});
