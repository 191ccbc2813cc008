/**
 * An outgoing-webhook bot under `bothost run`, its `/register` held by the sandbox so that it stays
 * not ready: a mention's delivery is answered `{"response_not_required": true}` at the bot's
 * reply_deadline and kept. The server never sends an answered delivery again, so the process is
 * then killed (SIGKILL) before the bot was ready, and started again on its state: the kept
 * delivery must be in the state already (a dead letter marked for replay, which `bothost failed
 * list` shows with the daemon down), and the new start runs its handler once, its reply through
 * the API.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeAll, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { assertBuilt, type CliProcess, killAll, runCli, spawnCli } from "../support/cli.ts";
import { freePort } from "../support/http-daemon.ts";
import { helperRunConfig } from "../support/outgoing-delivery.ts";
import { HELPER, MEL, outgoingOrg, TOKEN } from "../support/outgoing-org.ts";

let sandbox: Sandbox | undefined;
let dir: string | undefined;

beforeAll(assertBuilt);
afterEach(async () => {
  await killAll();
  sandbox?.control.delay(0);
  await sandbox?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  sandbox = undefined;
  dir = undefined;
});

const moduleText = `export default { setup(bot) {
  bot.on("message", (ctx) => ctx.reply("late hi, " + ctx.event.message.subject));
} };
`;

it("a delivery answered while the bot is not ready survives a kill -9: listed as a dead letter, handled once at the next start", {
  timeout: 60_000,
}, async () => {
  const port = await freePort();
  const sb = await startSandbox({ org: outgoingOrg(port) });
  sandbox = sb;
  dir = await mkdtemp(path.join(tmpdir(), "bothost-kept-crash-"));
  const module = path.join(dir, "bot.mjs");
  await writeFile(module, moduleText);
  const file = path.join(dir, "bothost.yaml");
  await writeFile(file, helperRunConfig({ serverUrl: sb.url, dir, port, module }));
  const env = { KEY: sb.control.apiKeyOf(HELPER), HELPER_TOKEN: TOKEN };
  const run = () => spawnCli(["run", "--config", file], { env });
  const answered = (daemon: CliProcess) =>
    daemon.logs().filter((l) => l.route === "/hooks/helper" && l.msg === "http request");

  // The bot registers for ever: the listener is up (it listens first), the bot not ready.
  sb.control.delay(3_600_000, { paths: [/^\/register$/] });
  const first = run();
  await sb.control.waitFor(() => sb.control.delayed() === 1, { timeoutMs: 20_000 });
  const id = sb.control.sendAs(MEL, {
    type: "stream",
    to: "general",
    topic: "killed early",
    content: "@**Helper** hello",
  }).id;
  // Answered at the reply deadline, the bot still registering: the server is done with it.
  await first.waitForLog((l) => l.route === "/hooks/helper" && l.msg === "http request", 20_000);
  expect(answered(first).map((l) => l.status)).toEqual([200]);
  await sb.control.settleWebhooks();
  first.kill("SIGKILL");
  expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
  expect(sb.control.messages().filter((m) => String(m.content).startsWith("Failure!"))).toEqual([]);

  // With the daemon down, the state holds the delivery, marked for replay.
  const listed = await runCli(["failed", "list", "--json", "-c", file], { env });
  expect(listed.stderr).toBe("");
  expect(listed.code).toBe(0);
  const letters = JSON.parse(listed.stdout) as Array<Record<string, unknown>>;
  expect(letters).toMatchObject([
    { bot: "helper", source: "webhook", attempts: 0, event: { message: { id } } },
  ]);
  expect(letters[0]!.retryRequestedAt).toEqual(expect.any(String));

  // The next start (registering at once) runs it, once; its reply goes through the API.
  sb.control.delay(0);
  const again = run();
  await again.waitForLog((l) => l.msg === "daemon started", 20_000);
  await again.waitForLog((l) => l.msg === "dead letter handled; removed from the list", 20_000);
  const replies = sb.control.messages().filter((m) => m.content === "late hi, killed early");
  expect(replies).toHaveLength(1);
  expect(replies[0]).not.toMatchObject({ client: "OutgoingWebhookResponse" });
  again.kill("SIGTERM");
  expect(await again.exited).toEqual({ code: 0, signal: null });
  expect(JSON.parse((await runCli(["failed", "list", "--json", "-c", file], { env })).stdout)).toEqual([]);
});
