/**
 * An outgoing-webhook delivery kept as a dead letter marked for replay (answered at its
 * reply_deadline while its handler still ran), whose handler brings the process down each time it
 * runs: each start after the kill replays it, counted as it begins, so it ends as a dead letter
 * (its replay mark gone) after `retries.attempts` kills, instead of killing every start. Real
 * `bothost run` processes on the file store.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { RECOVERING_LINE } from "../../src/pipeline/handler-failures.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import { type CliProcess, runCli, spawnCli } from "../support/cli.ts";
import { startUntilKept } from "../support/crash-backends.ts";
import { closeAfterTest, useE2eCleanup } from "../support/e2e-daemon.ts";
import { freePort } from "../support/http-daemon.ts";
import { helperRunConfig } from "../support/outgoing-delivery.ts";
import { HELPER, MEL, outgoingOrg, TOKEN } from "../support/outgoing-org.ts";

useE2eCleanup();

/** On "poison": with HOLD, never returns (its delivery is kept at the deadline); else kills the process. */
const moduleText = `export default { setup(bot) {
  bot.on("message", async (ctx) => {
    if (ctx.event.message.subject === "poison") {
      if (process.env.HOLD) await new Promise(() => {});
      ctx.log.info("poison ran");
      process.kill(process.pid, "SIGKILL");
      await new Promise(() => {});
    }
    await ctx.reply("ok " + ctx.event.message.subject);
  });
} };
`;

const ATTEMPTS = 2;
const said = (daemon: CliProcess, msg: string) => daemon.logs().filter((l) => l.msg === msg).length;

it("a kept delivery whose replay kills the process each time is kept again after retries.attempts restarts", {
  timeout: 90_000,
}, async () => {
  const port = await freePort();
  const sb = await startSandbox({ org: outgoingOrg(port) });
  closeAfterTest(() => sb.stop());
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-kept-loop-"));
  closeAfterTest(() => rm(dir, { recursive: true, force: true }));
  const module = path.join(dir, "bot.mjs");
  await writeFile(module, moduleText);
  const file = path.join(dir, "bothost.yaml");
  const config = helperRunConfig({ serverUrl: sb.url, dir, port, module });
  await writeFile(
    file,
    `${config}    retries: { attempts: ${ATTEMPTS}, backoff: 200ms, max_backoff: 200ms }\n`,
  );
  const env = { KEY: sb.control.apiKeyOf(HELPER), HELPER_TOKEN: TOKEN };
  const start = (more: Record<string, string> = {}) =>
    spawnCli(["run", "--config", file], { env: { ...env, ...more } });
  const mention = (topic: string) =>
    sb.control.sendAs(MEL, { type: "stream", to: "general", topic, content: "@**Helper** hello" });
  const list = async () =>
    JSON.parse((await runCli(["failed", "list", "--json", "-c", file], { env })).stdout) as Array<
      Record<string, unknown>
    >;

  // The first run outlasts the reply deadline: the delivery is answered and kept, then the kill.
  const first = start({ HOLD: "1" });
  await first.waitForLog((l) => l.msg === "daemon started", 20_000);
  mention("poison");
  await first.waitForLog((l) => l.route === "/hooks/helper" && l.msg === "http request", 20_000);
  await sb.control.settleWebhooks();
  first.kill("SIGKILL");
  expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
  expect(await list()).toMatchObject([{ source: "webhook", retryRequestedAt: expect.any(String) }]);

  // Each start after a kill replays it, counted: `ATTEMPTS` kills, then it is kept, not run.
  const { killed, daemon } = await startUntilKept(
    () => start(),
    "replayed dead letter failed again",
    ATTEMPTS,
  );
  expect(killed.length).toBe(ATTEMPTS);
  for (const d of [...killed, daemon]) expect(said(d, RECOVERING_LINE)).toBe(1);
  for (const d of killed) expect(said(d, "poison ran")).toBe(1);
  expect(said(daemon, "poison ran")).toBe(0);
  const again = daemon.logs().find((l) => String(l.msg).startsWith("replayed dead letter failed again"));
  expect(JSON.stringify(again)).toContain(`all ${ATTEMPTS} attempts were made before the bot restarted`);

  // The bot goes on: a later delivery is answered.
  mention("after");
  await expect
    .poll(() => sb.control.messages().filter((m) => m.content === "ok after"), { timeout: 15_000 })
    .toHaveLength(1);

  // Kept, no longer marked: a clean stop and a start replay nothing.
  daemon.kill("SIGTERM");
  expect(await daemon.exited).toEqual({ code: 0, signal: null });
  const last = start();
  await last.waitForLog((l) => l.msg === "daemon started", 20_000);
  expect(said(last, "replaying a dead letter")).toBe(0);
  const kept = await list();
  expect(kept).toHaveLength(1);
  expect(kept[0]!.retryRequestedAt).toBeUndefined();
  last.kill("SIGTERM");
  expect(await last.exited).toEqual({ code: 0, signal: null });
});
