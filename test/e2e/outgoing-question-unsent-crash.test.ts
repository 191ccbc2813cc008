/**
 * An outgoing-webhook bot under `bothost run` whose handler begins a dialog: its first question is
 * the delivery's HTTP answer. A kill -9 as that answer goes out (failpoint `answer-sending`), after
 * the dialog's log recorded the question and before the server got it: the server never posts the
 * question. The next start replays the delivery's letter; the person must then see the question,
 * once, and their answer to it must go on with the dialog.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { assertBuilt, killAll, spawnCli } from "../support/cli.ts";
import { type Backend, crashBackends } from "../support/crash-backends.ts";
import { freePort } from "../support/http-daemon.ts";
import { helperRunConfig, helperSaid } from "../support/outgoing-delivery.ts";
import { HELPER, MEL, outgoingOrg, TOKEN } from "../support/outgoing-org.ts";

const backends = await crashBackends("outgoing-question-unsent-crash");
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

const moduleText = `export default { setup(bot) {
  bot.on("message", async (ctx) => {
    const size = await ctx.prompt("Which size?", { timeout: "1h" });
    await ctx.reply("size: " + size.text);
  });
} };
`;

async function setUp(backendFor: (dir: string) => Backend) {
  const port = await freePort();
  const sb = await startSandbox({ org: outgoingOrg(port) });
  sandbox = sb;
  const at = await mkdtemp(path.join(tmpdir(), "bothost-question-unsent-"));
  dir = at;
  const module = path.join(at, "bot.mjs");
  await writeFile(module, moduleText);
  const file = path.join(at, "bothost.yaml");
  const state = backendFor(at).yaml;
  await writeFile(file, helperRunConfig({ serverUrl: sb.url, dir: at, port, module, state }));
  const env = { KEY: sb.control.apiKeyOf(HELPER), HELPER_TOKEN: TOKEN };
  const run = (more: Record<string, string> = {}) =>
    spawnCli(["run", "--config", file], { env: { ...env, ...more } });
  return { sb, run };
}

describe.each(backends)("on the %s", (_name, backendFor) => {
  it("a first question killed with its answer is asked at the next start, once, and its answer taken", {
    timeout: 60_000,
  }, async () => {
    const { sb, run } = await setUp(backendFor);
    const topic = "unsent question";
    const said = (content: string) => sb.control.messages().filter((m) => m.content === content);

    const first = run({ BOTHOST_FAILPOINTS: "answer-sending" });
    await first.waitForLog((l) => l.msg === "daemon started", 20_000);
    sb.control.sendAs(MEL, { type: "stream", to: "general", topic, content: "@**Helper** order" });
    expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
    await sb.control.settleWebhooks();
    expect(said("Which size?")).toEqual([]);

    const again = run();
    await again.waitForLog((l) => l.msg === "dead letter handled; removed from the list", 20_000);
    expect(said("Which size?")).toHaveLength(1);
    sb.control.sendAs(MEL, { type: "stream", to: "general", topic, content: "@**Helper** large" });
    await expect.poll(() => said("size: large"), { timeout: 15_000 }).toHaveLength(1);
    expect(helperSaid(sb).filter((m) => !m.startsWith("Failure!"))).toEqual(["Which size?", "size: large"]);
    again.kill("SIGTERM");
    expect(await again.exited).toEqual({ code: 0, signal: null });
  });
});
