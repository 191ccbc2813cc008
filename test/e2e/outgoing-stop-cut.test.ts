/**
 * An outgoing-webhook bot under `bothost run` whose handler runs past shutdown_timeout at a
 * SIGTERM, its handler ending at the abort: the run is kept as a dead letter and its message
 * recorded handled before the store closes (no error line at the stop), so that the next start
 * replays it once and a repeat of the delivery by the server runs nothing. A kill between the
 * letter's write and the mark's leaves no mark: the letter's replay records it, and the repeat
 * still runs nothing.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeAll, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { assertBuilt, type CliProcess, killAll, spawnCli } from "../support/cli.ts";
import { freePort } from "../support/http-daemon.ts";
import { helperRunConfig, helperSaid, postDelivery } from "../support/outgoing-delivery.ts";
import { HELPER, MEL, outgoingOrg, TOKEN } from "../support/outgoing-org.ts";

let sandbox: Sandbox | undefined;
let dir: string | undefined;

beforeAll(assertBuilt);
afterEach(async () => {
  await killAll();
  await sandbox?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  sandbox = undefined;
  dir = undefined;
});

/** The first run waits until the stop aborts it (a marker file says it ran); later runs reply. */
const moduleText = (marker: string) => `import { existsSync, writeFileSync } from "node:fs";
export default { setup(bot) {
  bot.on("message", async (ctx) => {
    ctx.log.info("e2e: run");
    if (!existsSync(${JSON.stringify(marker)})) {
      writeFileSync(${JSON.stringify(marker)}, "");
      ctx.log.info("e2e: waiting for the stop");
      await new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
    }
    await ctx.reply("done: " + ctx.event.message.subject);
  });
} };
`;

/** `bothost run` of the helper bot whose first run waits for the stop, on a new sandbox. */
async function setUp() {
  const port = await freePort();
  const sb = await startSandbox({ org: outgoingOrg(port) });
  sandbox = sb;
  dir = await mkdtemp(path.join(tmpdir(), "bothost-stop-cut-"));
  const module = path.join(dir, "bot.mjs");
  await writeFile(module, moduleText(path.join(dir, "ran")));
  const file = path.join(dir, "bothost.yaml");
  const config = helperRunConfig({ serverUrl: sb.url, dir, port, module })
    .replace("bots:", "shutdown_timeout: 1s\nbots:")
    .replace("reply_deadline: 1s", "reply_deadline: 9s");
  await writeFile(file, config);
  const env = { KEY: sb.control.apiKeyOf(HELPER), HELPER_TOKEN: TOKEN };
  const run = (more: Record<string, string> = {}) =>
    spawnCli(["run", "--config", file], { env: { ...env, ...more } });
  return { sb, port, run };
}

/** Mention the helper, and SIGTERM `first` once its handler runs. */
async function cutByStop(sb: Sandbox, first: CliProcess) {
  await first.waitForLog((l) => l.msg === "daemon started", 20_000);
  const content = "@**Helper** hello";
  const id = sb.control.sendAs(MEL, { type: "stream", to: "general", topic: "cut", content }).id;
  await first.waitForLog((l) => l.msg === "e2e: waiting for the stop", 20_000);
  first.kill("SIGTERM");
  return id;
}

/** At the next start: the letter replayed once; the server's repeat of the delivery runs nothing. */
async function replayedOnce(sb: Sandbox, again: CliProcess, port: number, id: number) {
  await again.waitForLog((l) => l.msg === "dead letter handled; removed from the list", 20_000);
  expect(helperSaid(sb).filter((c) => c.startsWith("done"))).toEqual(["done: cut"]);
  // The server sends the delivery again (its connection was closed unanswered): it runs nothing.
  const repeat = await postDelivery(sb, `http://127.0.0.1:${port}`, id);
  expect(repeat).toMatchObject({ status: 200 });
  expect(JSON.stringify(repeat)).not.toMatch(/done: cut/);
  expect(helperSaid(sb).filter((c) => c.startsWith("done"))).toEqual(["done: cut"]);
  again.kill("SIGTERM");
  expect(await again.exited).toEqual({ code: 0, signal: null });
  expect(again.logs().filter((l) => l.msg === "e2e: run")).toHaveLength(1);
}

it("a run the stop's deadline cuts is kept and recorded before the store closes: replayed once, a repeat runs nothing", {
  timeout: 60_000,
}, async () => {
  const { sb, port, run } = await setUp();
  const first = run();
  const id = await cutByStop(sb, first);
  expect(await first.exited).toEqual({ code: 0, signal: null });
  expect(first.logs().some((l) => String(l.msg).startsWith("handler run cut by the bot's stop"))).toBe(true);
  expect(first.logs().filter((l) => Number(l.level) >= 50)).toEqual([]);
  await sb.control.settleWebhooks();
  await replayedOnce(sb, run(), port, id);
});

it("killed between the cut run's letter and its message's mark: the replay records it, a repeat runs nothing", {
  timeout: 60_000,
}, async () => {
  const { sb, port, run } = await setUp();
  const first = run({ BOTHOST_FAILPOINTS: "letter-kept" });
  const id = await cutByStop(sb, first);
  expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
  await sb.control.settleWebhooks();
  await replayedOnce(sb, run(), port, id);
});
