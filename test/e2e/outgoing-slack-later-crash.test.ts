/**
 * A Slack-format outgoing-webhook bot under `bothost run` whose first lookup of a delivery's
 * message fails: the delivery is answered at once, and a later lookup finds the message and runs
 * the handler. The server never sends an answered delivery again, so that run must be kept as a
 * Zulip-format one answered while its handler runs is: the process is killed (SIGKILL) while the
 * handler waits, then started again on its state, which runs the handler again, its reply made
 * once in all. The handler waits on a gate this test serves over HTTP (`GATE`), held for the first
 * process and open for the next.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeAll, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { assertBuilt, killAll, runCli, spawnCli } from "../support/cli.ts";
import { freePort } from "../support/http-daemon.ts";
import { helperRunConfig } from "../support/outgoing-delivery.ts";
import { HELPER, MEL, outgoingOrg, TOKEN } from "../support/outgoing-org.ts";

let sandbox: Sandbox | undefined;
let dir: string | undefined;
let gate: Server | undefined;

beforeAll(assertBuilt);
afterEach(async () => {
  await killAll();
  gate?.closeAllConnections();
  await new Promise((resolve) => (gate ? gate.close(resolve) : resolve(undefined)));
  await sandbox?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  sandbox = undefined;
  dir = undefined;
  gate = undefined;
});

// Each run replies (through the API: the delivery was answered already), waits at the gate, then
// says it is done.
const moduleText = `export default { setup(bot) {
  bot.on("message", async (ctx) => {
    ctx.log.info("test: the handler runs");
    await ctx.reply("hi, " + ctx.event.message.subject);
    await fetch(process.env.GATE);
    await ctx.reply("done, " + ctx.event.message.subject);
  });
} };
`;

it("a Slack-format delivery found by a later lookup survives a kill -9 while its handler runs: the next start runs it again, each reply made once", {
  timeout: 60_000,
}, async () => {
  const port = await freePort();
  const sb = await startSandbox({ org: outgoingOrg(port, "slack") });
  sandbox = sb;
  // The gate holds every request until it is opened; then it answers at once.
  let open = false;
  const held: ServerResponse[] = [];
  let reached = () => {};
  const reachedGate = new Promise<void>((resolve) => {
    reached = resolve;
  });
  gate = createServer((_req, res) => {
    if (open) return void res.end("open");
    held.push(res);
    reached();
  });
  await new Promise<void>((resolve) => gate!.listen(0, "127.0.0.1", resolve));
  const gateUrl = `http://127.0.0.1:${(gate.address() as AddressInfo).port}/`;
  dir = await mkdtemp(path.join(tmpdir(), "bothost-slack-later-crash-"));
  const module = path.join(dir, "bot.mjs");
  await writeFile(module, moduleText);
  const file = path.join(dir, "bothost.yaml");
  await writeFile(file, helperRunConfig({ serverUrl: sb.url, dir, port, module }));
  const env = { KEY: sb.control.apiKeyOf(HELPER), HELPER_TOKEN: TOKEN, GATE: gateUrl };
  const run = () => spawnCli(["run", "--config", file], { env });
  const list = async () => {
    const listed = await runCli(["failed", "list", "--json", "-c", file], { env });
    expect(listed.stderr).toBe("");
    return JSON.parse(listed.stdout) as Array<Record<string, unknown>>;
  };
  const said = (content: string) => sb.control.messages().filter((m) => m.content === content);

  const first = run();
  await first.waitForLog((l) => l.msg === "daemon started", 20_000);
  // Every try of the first lookup fails: the delivery is answered, its message looked up later.
  sb.control.failNext(4, { status: 502, paths: [/^\/messages$/], methods: ["GET"] });
  const id = sb.control.sendAs(MEL, {
    type: "stream",
    to: "general",
    topic: "later",
    content: "@**Helper** hi",
  }).id;
  await first.waitForLog(
    (l) => l.msg === "Slack-format delivery: its message found by a later lookup",
    30_000,
  );
  await reachedGate;
  await sb.control.waitFor(() => said("hi, later").length === 1);
  first.kill("SIGKILL");
  expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });

  // With the daemon down, the state holds the delivery, marked for replay.
  expect(await list()).toMatchObject([{ bot: "helper", source: "webhook", event: { message: { id } } }]);

  open = true;
  for (const res of held.splice(0)) res.destroy();
  const again = run();
  await again.waitForLog((l) => l.msg === "dead letter handled; removed from the list", 20_000);
  expect(again.logs().filter((l) => l.msg === "test: the handler runs")).toHaveLength(1);
  expect(said("hi, later")).toHaveLength(1);
  expect(said("done, later")).toHaveLength(1);
  expect(sb.control.messages().filter((m) => String(m.content).startsWith("Failure!"))).toEqual([]);
  again.kill("SIGTERM");
  expect(await again.exited).toEqual({ code: 0, signal: null });
  expect(await list()).toEqual([]);
});
