/**
 * `ctx.report` under `bothost run`, the process killed right after the server took the report
 * (the bot kills itself there, the first time): at the next start the message is caught up and
 * its handler runs again, and the report is not made twice, on the file store (whose writes are
 * otherwise kept within a second) as on Redis. The re-run is told what the first run was (the
 * report made), so what the handler does after a report is not skipped.
 */
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { crashBackends } from "../support/crash-backends.ts";
import { selfKillingBot, useSelfKillingBots } from "../support/self-killing-bot.ts";

const MEMBER = "member@sandbox.example";

useSelfKillingBots();

/** Reports every message; the first time, kills its own process once the report was made. */
const moduleText = (flag: string) => `import { existsSync, writeFileSync } from "node:fs";
export default { setup(bot) {
  bot.on("message", async (ctx) => {
    const result = await ctx.report(ctx.event.message.id, "spam");
    ctx.log.info({ result }, "test: reported");
    if (!existsSync(${JSON.stringify(flag)})) {
      writeFileSync(${JSON.stringify(flag)}, "");
      process.kill(process.pid, "SIGKILL");
    }
  });
} };
`;

const reportsPosted = (s: Sandbox) =>
  s.control.messages().filter((m) => String(m.content).includes("reported a message sent by"));

const backends = await crashBackends("report-crash");

describe.each(backends)("on the %s", (_name, backendFor) => {
  it("killed right after a report was made: the handler runs again, the report is made once", {
    timeout: 60_000,
  }, async () => {
    const { sandbox, flag, start } = await selfKillingBot({
      moduleText,
      stateYaml: (dir) => backendFor(dir).yaml,
    });
    const first = await start();
    sandbox.control.sendAs(MEMBER, {
      type: "stream",
      to: "general",
      topic: "sales",
      content: "buy cheap watches",
    });
    expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
    expect(existsSync(flag)).toBe(true);
    expect(reportsPosted(sandbox)).toHaveLength(1);

    const again = await start();
    const ran = await again.waitForLog((l) => l.msg === "test: reported", 20_000);
    expect(ran.result).toEqual({ reported: true, earlier: true });
    expect(reportsPosted(sandbox)).toHaveLength(1);
    again.kill("SIGTERM");
    expect(await again.exited).toEqual({ code: 0, signal: null });
  });
});
