/**
 * `bothost run` stops on SIGTERM while a bot's `setup` is still running (its `handler_timeout`
 * far away): the shutdown does not wait for that setup, and the daemon exits 0 with its queues
 * deleted and no second signal; it never says "daemon started", only that the start was cut
 * short. `bothost reload` of a module whose setup never finishes is refused (exit 2, one line,
 * logged by the daemon) and the next reload applies.
 */
import { writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { runCli, spawnCli } from "../support/cli.ts";
import { botEmail, orgWithBots, startE2eSandbox, useE2eCleanup, writeConfig } from "../support/e2e-daemon.ts";
import { useModuleFiles } from "./module-files.ts";

useE2eCleanup();

/** A module whose setup says it began (a JSON line on stdout), then never finishes. */
const HANGING = `export default { events: ["message"], async setup() {
  process.stdout.write(JSON.stringify({ msg: "hanging setup entered" }) + "\\n");
  await new Promise(() => {});
} };\n`;

/** `bothost run` of two bots, `hangs` running `module` with its setup bounded by `timeout`. */
async function runWith(module: string, timeout: string) {
  const sandbox = await startE2eSandbox(orgWithBots(2));
  const config = await writeConfig(sandbox, {
    good: { email: botEmail(0) },
    hangs: { email: botEmail(1), extra: `handler_timeout: ${timeout}` },
  });
  const file = (await useModuleFiles(config, { hangs: module }))("hangs");
  const run = spawnCli(["run", "--config", config.file], { env: config.env });
  return { sandbox, config, file, run };
}

describe("bothost run with a setup that never finishes", () => {
  it("stops on one SIGTERM, exit 0, without waiting for that setup", async () => {
    const { sandbox, run } = await runWith(HANGING, "1h");
    await run.waitForLog((l) => l.msg === "hanging setup entered");
    run.kill("SIGTERM");
    expect(await run.exited).toEqual({ code: 0, signal: null });
    const said = run.logs().map((l) => l.msg);
    expect(said).not.toContain("second signal: exiting without waiting");
    // Operators and scripts wait for "daemon started": it is not said once the stop has begun.
    expect(said.slice(said.indexOf("shutting down"))).not.toContain("daemon started");
    expect(said).toContain("start cut short by the shutdown");
    // The bot whose setup hangs is named as cut (the other one too, if its start was under way).
    const cut = run.logs().find((l) => l.msg === "start cut short by the shutdown")?.cut;
    expect(cut).toContain("hangs");
    expect(sandbox.control.queues().filter((q) => q.email === botEmail(0))).toEqual([]);
  });
});

/** A module whose setup finishes. */
const FINE = `export default { events: ["message"], setup(bot) { bot.on("message", () => {}); } };\n`;

describe("bothost reload of a setup that never finishes", () => {
  it("is refused in one line, exit 2, logged by the daemon; the next reload applies", async () => {
    const { config, file, run } = await runWith(FINE, "300ms");
    try {
      await run.waitForLog((l) => l.msg === "daemon started");
      await writeFile(file, HANGING);
      const refused = await runCli(["reload", "--config", config.file], { env: config.env });
      expect(refused.code).toBe(2);
      expect(refused.stderr.trimEnd().split("\n")).toEqual([
        "bothost reload: the daemon refused the new config and keeps the old one:",
        "bots.hangs (./hangs.mjs): setup did not finish within 300 ms (handler_timeout) [SETUP_TIMEOUT] [RELOAD_REFUSED]",
      ]);
      const refusals = () => run.logs().filter((l) => String(l.msg).startsWith("reload refused; "));
      await expect
        .poll(() => refusals().map((l) => l.problems))
        .toEqual([
          "bots.hangs (./hangs.mjs): setup did not finish within 300 ms (handler_timeout) [SETUP_TIMEOUT]",
        ]);

      await writeFile(file, FINE.replace("() => {}", "() => undefined"));
      const applied = await runCli(["reload", "--config", config.file, "--json"], { env: config.env });
      expect(applied.code).toBe(0);
      expect(JSON.parse(applied.stdout)).toMatchObject({ refused: false, restart: ["hangs"], failed: [] });
    } finally {
      run.kill("SIGTERM");
      await run.exited;
    }
  });
});

describe("bothost reload that takes longer than a status query", () => {
  // A reload may take as long as the slowest setup: the CLI waits for the daemon's answer rather
  // than giving up after a status query's 10 s and falling back to SIGHUP (a second reload).
  it("waits for the answer: refused in one line, exit 2, no SIGHUP", async () => {
    const { config, file, run } = await runWith(FINE, "11s");
    try {
      await run.waitForLog((l) => l.msg === "daemon started");
      await writeFile(file, HANGING);
      const refused = await runCli(["reload", "--config", config.file], { env: config.env });
      expect({ code: refused.code, stdout: refused.stdout }).toEqual({ code: 2, stdout: "" });
      expect(refused.stderr).toContain(
        "setup did not finish within 11000 ms (handler_timeout) [SETUP_TIMEOUT]",
      );
      expect(run.logs().filter((l) => l.signal === "SIGHUP")).toEqual([]);
      expect(run.logs().filter((l) => String(l.msg).startsWith("reload refused; "))).toHaveLength(1);
    } finally {
      run.kill("SIGTERM");
      await run.exited;
    }
  }, 60_000);
});
