/**
 * `ctx.report` under `bothost run` when the server answers its call with a 429 (the account's
 * minute spent by calls the bot did not count: the process before a restart, another client),
 * and the process is killed (kill -9) while the report waits for the time the server asked: the
 * report was not made, so the claim does not stay, and the next start reports the message.
 */
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { crashBackends } from "../support/crash-backends.ts";
import { selfKillingBot, useSelfKillingBots } from "../support/self-killing-bot.ts";

const MEMBER = "member@sandbox.example";

useSelfKillingBots();

const moduleText = () => `export default { setup(bot) {
  bot.on("message", async (ctx) => {
    const result = await ctx.report(ctx.event.message.id, "spam");
    ctx.log.info({ result }, "test: reported");
  });
} };
`;

const reportsPosted = (s: Sandbox) =>
  s.control.messages().filter((m) => String(m.content).includes("reported a message sent by"));

const backends = await crashBackends("report-429-crash");

describe.each(backends)("on the %s", (_name, backendFor) => {
  it("killed while a report waits out the server's 429: the next start reports the message, once", {
    timeout: 60_000,
  }, async () => {
    const { sandbox, start } = await selfKillingBot({ moduleText, stateYaml: (dir) => backendFor(dir).yaml });
    const first = await start();
    sandbox.control.failNext(1, {
      status: 429,
      body: {
        result: "error",
        msg: "API usage exceeded rate limit",
        code: "RATE_LIMIT_HIT",
        "retry-after": 30,
      },
      paths: [/\/report$/],
    });
    sandbox.control.sendAs(MEMBER, {
      type: "stream",
      to: "general",
      topic: "sales",
      content: "buy cheap watches",
    });
    // The report waits 30 s for the server; the process dies meanwhile.
    await first.waitForLog(
      (l) => String(l.msg).startsWith("a report waits for the server's rate limit"),
      20_000,
    );
    first.kill("SIGKILL");
    expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
    expect(reportsPosted(sandbox)).toHaveLength(0);

    const again = await start();
    const ran = await again.waitForLog((l) => l.msg === "test: reported", 20_000);
    expect(ran.result).toEqual({ reported: true });
    expect(reportsPosted(sandbox)).toHaveLength(1);
    again.kill("SIGTERM");
    expect(await again.exited).toEqual({ code: 0, signal: null });
  });
});
