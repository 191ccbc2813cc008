/**
 * `ctx.report` under `bothost run`, the process killed right after the server took the report
 * (the bot kills itself there, the first time): at the next start the message is caught up and
 * its handler runs again, and the report is not made twice, on the file store (whose writes are
 * otherwise kept within a second) as on Redis.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { assertBuilt, killAll, spawnCli } from "../support/cli.ts";
import { crashBackends } from "../support/crash-backends.ts";

const BOT = "bot@sandbox.example";
const MEMBER = "member@sandbox.example";

const opened: Array<() => Promise<unknown>> = [];
beforeAll(assertBuilt);
afterEach(async () => {
  await killAll();
  for (const close of opened.splice(0).reverse()) await close();
});

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
    const sandbox = await startSandbox({ heartbeatSeconds: 1 });
    opened.push(() => sandbox.stop());
    const dir = await mkdtemp(path.join(tmpdir(), "bothost-report-crash-"));
    opened.push(() => rm(dir, { recursive: true, force: true }));
    const flag = path.join(dir, "killed");
    const module = path.join(dir, "reporter.mjs");
    await writeFile(module, moduleText(flag));
    const file = path.join(dir, "bothost.yaml");
    await writeFile(
      file,
      [
        `server:\n  url: ${sandbox.url}`,
        backendFor(dir).yaml,
        "log:\n  level: info\n  pretty: false",
        "bots:",
        `  mod:\n    module: ${module}\n    email: ${BOT}\n    api_key: \${KEY}`,
      ].join("\n") + "\n",
    );
    const env = { KEY: sandbox.control.apiKeyOf(BOT) };
    const first = spawnCli(["run", "--config", file], { env });
    await first.waitForLog((l) => l.msg === "daemon started", 20_000);
    sandbox.control.sendAs(MEMBER, {
      type: "stream",
      to: "general",
      topic: "sales",
      content: "buy cheap watches",
    });
    expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
    expect(existsSync(flag)).toBe(true);
    expect(reportsPosted(sandbox)).toHaveLength(1);

    const again = spawnCli(["run", "--config", file], { env });
    const ran = await again.waitForLog((l) => l.msg === "test: reported", 20_000);
    expect(ran.result).toEqual({ reported: false, reason: "duplicate" });
    expect(reportsPosted(sandbox)).toHaveLength(1);
    again.kill("SIGTERM");
    expect(await again.exited).toEqual({ code: 0, signal: null });
  });
});
