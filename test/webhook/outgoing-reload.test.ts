/**
 * An outgoing-webhook bot under `bothost run`, reloaded (SIGHUP): restarted with its changed
 * module, it answers the next mention with the new code (its route takes the new runtime over),
 * and a changed `reply_deadline` applies to the next delivery.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeAll, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { assertBuilt, type CliProcess, killAll, spawnCli } from "../support/cli.ts";
import { freePort } from "../support/http-daemon.ts";
import { helperSaid } from "../support/outgoing-delivery.ts";
import { HELPER, MEL, outgoingOrg, TOKEN } from "../support/outgoing-org.ts";

const opened: Array<() => Promise<unknown>> = [];
beforeAll(assertBuilt);
afterEach(async () => {
  await killAll();
  for (const close of opened.splice(0).reverse()) await close();
});

/** A bot answering each message with `word` and its text, or (`word` undefined) never in time. */
const moduleText = (word: string | undefined) =>
  word === undefined
    ? `export default { setup(bot) { bot.on("message", () => new Promise(() => {})); } };\n`
    : `export default { setup(bot) { bot.on("message", (ctx) => ctx.reply("${word}: " + ctx.event.message.content)); } };\n`;

async function setUp(word: string | undefined, deadline: string) {
  const port = await freePort();
  const sandbox: Sandbox = await startSandbox({ org: outgoingOrg(port) });
  opened.push(() => sandbox.stop());
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-outgoing-reload-"));
  opened.push(() => rm(dir, { recursive: true, force: true }));
  const module = path.join(dir, "helper.mjs");
  const file = path.join(dir, "bothost.yaml");
  const config = (wait: string) =>
    writeFile(
      file,
      [
        `server:\n  url: ${sandbox.url}`,
        `state:\n  path: ${path.join(dir, "state")}`,
        "log:\n  level: info\n  pretty: false",
        `http:\n  listen: 127.0.0.1:${port}`,
        "bots:",
        `  helper:\n    module: ${module}\n    email: ${HELPER}\n    api_key: \${HKEY}`,
        `    handler_timeout: 1h\n    outgoing_webhook:\n      path: /hooks/helper\n      token: \${HELPER_TOKEN}\n      reply_deadline: ${wait}`,
      ].join("\n") + "\n",
    );
  await writeFile(module, moduleText(word));
  await config(deadline);
  const daemon = spawnCli(["run", "--config", file], {
    env: { HKEY: sandbox.control.apiKeyOf(HELPER), HELPER_TOKEN: TOKEN },
  });
  await daemon.waitForLog((l) => l.msg === "daemon started", 20_000);
  return { sandbox, daemon, module, config };
}

/** SIGHUP; resolves once the reload restarted the bot and it is ready for deliveries again. */
async function reloaded(daemon: CliProcess) {
  const ready = () => daemon.logs().filter((l) => l.msg === "ready for outgoing-webhook deliveries").length;
  const before = ready();
  daemon.kill("SIGHUP");
  await expect
    .poll(() => daemon.logs().find((l) => l.msg === "config reloaded"), { timeout: 20_000 })
    .toMatchObject({
      restarted: ["helper"],
    });
  await expect.poll(ready, { timeout: 20_000 }).toBeGreaterThan(before);
}

const mention = (sandbox: Sandbox, content: string) =>
  sandbox.control.sendAs(MEL, {
    type: "stream",
    to: "general",
    topic: "t",
    content: `@**Helper** ${content}`,
  }).id;

/** The statuses the route answered, from the access log (written just after each answer). */
const hookStatuses = (daemon: CliProcess) =>
  daemon
    .logs()
    .filter((l) => l.msg === "http request" && l.path === "/hooks/helper")
    .map((l) => l.status);

it("a module changed and reloaded: the next mention is answered by the new code", {
  timeout: 60_000,
}, async () => {
  const { sandbox, daemon, module } = await setUp("v1", "8s");
  mention(sandbox, "before");
  await expect.poll(() => helperSaid(sandbox), { timeout: 15_000 }).toEqual(["v1: @**Helper** before"]);
  await writeFile(module, moduleText("v2"));
  await reloaded(daemon);
  mention(sandbox, "after");
  await expect
    .poll(() => helperSaid(sandbox), { timeout: 15_000 })
    .toEqual(["v1: @**Helper** before", "v2: @**Helper** after"]);
  // The access log line comes after the answer the sandbox acted on: polled.
  await expect.poll(() => hookStatuses(daemon), { timeout: 15_000 }).toEqual([200, 200]);
});

it("reply_deadline changed by a reload applies to the next delivery", { timeout: 60_000 }, async () => {
  // A handler that never replies: the server is answered at the deadline with nothing to post.
  // The longest deadline the config takes first, then 1 s: answered well before the first's end.
  const { sandbox, daemon, config } = await setUp(undefined, "10s");
  await config("1s");
  await reloaded(daemon);
  mention(sandbox, "one");
  await expect
    .poll(() => daemon.logs().find((l) => l.msg === "http request" && l.path === "/hooks/helper"), {
      timeout: 8_000,
    })
    .toMatchObject({ status: 200 });
  expect(helperSaid(sandbox)).toEqual([]);
});

it("a mention delivered while a reload restarts the bot waits for its new version and gets its reply; no Failure! message", {
  timeout: 60_000,
}, async () => {
  const { sandbox, daemon, module } = await setUp("v1", "8s");
  await writeFile(module, moduleText("v2"));
  // The new version's register is held: the listener is up, the bot not ready.
  sandbox.control.delay(3_600_000, { paths: [/^\/register$/] });
  daemon.kill("SIGHUP");
  await sandbox.control.waitFor(() => sandbox.control.delayed() === 1, { timeoutMs: 20_000 });
  mention(sandbox, "during");
  const routed = () =>
    daemon
      .logs()
      .filter(
        (l) =>
          l.msg === "outgoing webhook: delivery held until the bot is ready" ||
          (l.msg === "http request" && l.path === "/hooks/helper"),
      ).length;
  await expect.poll(routed, { timeout: 15_000 }).toBe(1);
  sandbox.control.delay(0);
  await sandbox.control.settleWebhooks();
  expect(helperSaid(sandbox)).toEqual(["v2: @**Helper** during"]);
  expect(sandbox.control.messages().filter((m) => String(m.content).startsWith("Failure!"))).toEqual([]);
  await expect.poll(() => hookStatuses(daemon), { timeout: 15_000 }).toEqual([200]);
});
