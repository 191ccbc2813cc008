/**
 * An outgoing-webhook bot under `bothost run` whose handler replies in time: the reply is the
 * delivery's HTTP answer, its record and the delivery's letter written first. A kill -9 after those
 * writes and before the answer goes out (failpoint `answer-sending`) leaves the server without the
 * reply: it posts `Failure! Bot is unavailable` once its retries find no daemon. The next start
 * replays the letter, and the reply must reach the conversation then, once: its record says it was
 * handed to an answer, not that the server posted it. On the file store and on Redis (where the
 * reply's record is written before the answer goes, the window this covers), and so for the
 * server's retry of the delivery reaching the next start: its answer carries the reply. A handler
 * whose first question of a dialog is that answer, killed the same way after the dialog's log
 * recorded it: the question is asked at the next start, once, and its answer goes on with it.
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
import { helperRunConfig, helperSaid, postDelivery } from "../support/outgoing-delivery.ts";
import { HELPER, MEL, outgoingOrg, TOKEN } from "../support/outgoing-org.ts";

const backends = await crashBackends("outgoing-reply-unsent-crash");
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
    await ctx.reply("hi, " + ctx.event.message.subject);
  });
} };
`;

/** A bot whose handler begins a dialog: its first question is the delivery's answer. */
const questionText = `export default { setup(bot) {
  bot.on("message", async (ctx) => {
    const size = await ctx.prompt("Which size?", { timeout: "1h" });
    await ctx.reply("size: " + size.text);
  });
} };
`;

/** A sandbox, and `bothost run` of the helper bot on `backendFor`'s store (`more`: crash points). */
async function setUp(backendFor: (dir: string) => Backend, text = moduleText) {
  const port = await freePort();
  const sb = await startSandbox({ org: outgoingOrg(port) });
  sandbox = sb;
  const at = await mkdtemp(path.join(tmpdir(), "bothost-reply-unsent-"));
  dir = at;
  const module = path.join(at, "bot.mjs");
  await writeFile(module, text);
  const file = path.join(at, "bothost.yaml");
  const state = backendFor(at).yaml;
  await writeFile(file, helperRunConfig({ serverUrl: sb.url, dir: at, port, module, state }));
  const env = { KEY: sb.control.apiKeyOf(HELPER), HELPER_TOKEN: TOKEN };
  const run = (more: Record<string, string> = {}) =>
    spawnCli(["run", "--config", file], { env: { ...env, ...more } });
  return { sb, port, run };
}

describe.each(backends)("on the %s", (name, backendFor) => {
  it("a reply killed with its answer, before it went out, is posted at the next start, once", {
    timeout: 60_000,
  }, async () => {
    const { sb, run } = await setUp(backendFor);
    const topic = "unsent reply";
    const said = (content: string) => sb.control.messages().filter((m) => m.content === content);

    const first = run({ BOTHOST_FAILPOINTS: "answer-sending" });
    await first.waitForLog((l) => l.msg === "daemon started", 20_000);
    sb.control.sendAs(MEL, { type: "stream", to: "general", topic, content: "@**Helper** hello" });
    expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
    // The server's retries find no daemon: the reply never reached it.
    await sb.control.settleWebhooks();
    expect(said("Failure! Bot is unavailable")).toHaveLength(1);
    expect(said(`hi, ${topic}`)).toEqual([]);

    const again = run();
    await again.waitForLog((l) => l.msg === "dead letter handled; removed from the list", 20_000);
    expect(said(`hi, ${topic}`)).toHaveLength(1);
    again.kill("SIGTERM");
    expect(await again.exited).toEqual({ code: 0, signal: null });
  });

  it("a reply killed with its answer is given in the answer to the server's retry at the next start, once", {
    timeout: 60_000,
  }, async () => {
    const { sb, port, run } = await setUp(backendFor);
    const topic = "retried reply";
    const url = `http://127.0.0.1:${port}`;
    // Mentioned silently: the test is the server, its deliveries posted by hand.
    const id = sb.control.sendAs(MEL, {
      type: "stream",
      to: "general",
      topic,
      content: "@_**Helper** hello",
    }).id;

    const first = run({ BOTHOST_FAILPOINTS: "answer-sending" });
    await first.waitForLog((l) => l.msg === "daemon started", 20_000);
    expect(await postDelivery(sb, url, id)).toMatchObject({ error: expect.any(String) });
    expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });

    const again = run();
    await again.waitForLog((l) => l.msg === "http listener started", 20_000);
    // On Redis the bot starts here once its lease is taken (before, another instance may hold it: 503).
    if (name === "Redis")
      await again.waitForLog((l) => l.msg === "lease acquired; starting the bot on this instance", 20_000);
    const retried = await postDelivery(sb, url, id);
    // Its run goes first (the delivery held until the bot is ready): the letter's replay finds it handled.
    expect(retried).toEqual({ status: 200, body: { content: `hi, ${topic}` } });
    await again.waitForLog((l) => l.msg === "dead letter handled; removed from the list", 20_000);
    expect(sb.control.messages().filter((m) => m.content === `hi, ${topic}`)).toEqual([]);
    again.kill("SIGTERM");
    expect(await again.exited).toEqual({ code: 0, signal: null });
  });

  it("a dialog's first question killed with its answer is asked at the next start, once, and its answer taken", {
    timeout: 60_000,
  }, async () => {
    const { sb, run } = await setUp(backendFor, questionText);
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
