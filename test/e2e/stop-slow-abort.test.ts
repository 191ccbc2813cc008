/**
 * `bothost run`, SIGTERM past shutdown_timeout, a handler slow to settle once aborted: it waits for
 * a request to a server of the test's, then throws its signal's reason. The stop gives the aborted
 * runs a grace to settle: one that settles within it keeps what a run the abort ended keeps; one
 * still running past it is left (a warn line), nothing of it recorded. Either way no error line,
 * and its message is handled once at the next start, on a queue (caught up) and as an outgoing
 * webhook's delivery (its dead letter replayed; a repeat of it by the server runs nothing).
 */

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { assertBuilt, type CliProcess, killAll, spawnCli } from "../support/cli.ts";
import { botEmail, botSaid, MEMBER, orgWithBots } from "../support/e2e-daemon.ts";
import { freePort } from "../support/http-daemon.ts";
import { helperRunConfig, helperSaid, postDelivery } from "../support/outgoing-delivery.ts";
import { HELPER, MEL, outgoingOrg, TOKEN } from "../support/outgoing-org.ts";

let sandbox: Sandbox | undefined;
let dir: string | undefined;
const closing: (() => void)[] = [];

beforeAll(assertBuilt);
afterEach(async () => {
  await killAll();
  for (const close of closing.splice(0)) close();
  await sandbox?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  sandbox = undefined;
  dir = undefined;
});

const LEFT = "handlers still running after the stop's grace are left";

/** A server that holds every request until {@link answer}: what the aborted handler waits for. */
async function holdingServer() {
  const held: ServerResponse[] = [];
  const server = createServer((_, res) => void held.push(res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closing.push(() => {
    for (const res of held) res.destroy();
    server.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const answer = () => {
    for (const res of held.splice(0)) res.end("ok");
  };
  return { url, held, answer };
}

/** The first run waits for its abort, then for the holding server, then throws; later runs reply. */
const moduleText = (marker: string, holdUrl: string) => `import { existsSync, writeFileSync } from "node:fs";
export default { setup(bot) {
  bot.on("message", async (ctx) => {
    ctx.log.info("e2e: run");
    if (!existsSync(${JSON.stringify(marker)})) {
      writeFileSync(${JSON.stringify(marker)}, "");
      await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
      ctx.log.info("e2e: aborted");
      await fetch(${JSON.stringify(holdUrl)});
      throw ctx.signal.reason;
    }
    await ctx.reply("done: " + ctx.event.message.content);
  });
} };
`;

type Mode = "queue" | "webhook";

/** A daemon of one bot, `mode`, on `sb` (`port`: its listener, for a webhook bot); its module's handler holds on `holdUrl`. */
async function setUp(mode: Mode, holdUrl: string, port: number) {
  dir = await mkdtemp(path.join(tmpdir(), "bothost-slow-abort-"));
  const module = path.join(dir, "bot.mjs");
  await writeFile(module, moduleText(path.join(dir, "ran"), holdUrl));
  const file = path.join(dir, "bothost.yaml");
  const sb = sandbox!;
  const config =
    mode === "webhook"
      ? helperRunConfig({ serverUrl: sb.url, dir, port, module }).replace(
          "reply_deadline: 1s",
          "reply_deadline: 9s",
        )
      : [
          `server:\n  url: ${sb.url}`,
          `state:\n  path: ${dir}/state`,
          "log:\n  level: info\n  pretty: false",
          "bots:",
          `  b0:\n    module: ${module}\n    email: ${botEmail(0)}\n    api_key: \${KEY}`,
        ].join("\n");
  await writeFile(file, config.replace("bots:", "shutdown_timeout: 1s\nbots:"));
  const email = mode === "webhook" ? HELPER : botEmail(0);
  const env = { KEY: sb.control.apiKeyOf(email), HELPER_TOKEN: TOKEN };
  return () => spawnCli(["run", "--config", file], { env });
}

const said = (mode: Mode) =>
  (mode === "webhook" ? helperSaid(sandbox!) : botSaid(sandbox!)).filter((c) => c.startsWith("done"));

const errors = (p: CliProcess) => p.logs().filter((l) => Number(l.level) >= 50);

describe("a handler slow to settle once the stop aborted it", { timeout: 60_000 }, () => {
  for (const mode of ["queue", "webhook"] as const)
    for (const settles of ["within the grace", "past the grace"] as const)
      it(`${mode}: settling ${settles}, it is handled once at the next start, with no error line`, async () => {
        const port = await freePort();
        sandbox = await startSandbox(
          mode === "webhook" ? { org: outgoingOrg(port) } : { org: orgWithBots(1) },
        );
        const hold = await holdingServer();
        const run = await setUp(mode, hold.url, port);
        const first = run();
        await first.waitForLog((l) => l.msg === "daemon started", 20_000);
        const content = mode === "webhook" ? "@**Helper** hello" : "hello";
        const [from, to] = mode === "webhook" ? [MEL, "general"] : [MEMBER, "c0"];
        const id = sandbox.control.sendAs(from, { type: "stream", to, topic: "t", content }).id;
        await first.waitForLog((l) => l.msg === "e2e: run", 20_000);
        first.kill("SIGTERM");
        // Aborted and holding: answered now, it settles within the grace; never, it is left.
        if (settles === "within the grace") {
          await expect.poll(() => hold.held.length, { timeout: 20_000 }).toBe(1);
          hold.answer();
        }
        expect(await first.exited).toEqual({ code: 0, signal: null });
        expect(errors(first)).toEqual([]);
        expect(first.logs().some((l) => String(l.msg).startsWith(LEFT))).toBe(settles === "past the grace");
        if (mode === "webhook") await sandbox.control.settleWebhooks();

        const again = run();
        await expect.poll(() => said(mode), { timeout: 20_000 }).toEqual([`done: ${content}`]);
        if (mode === "webhook") {
          // The server sends the delivery again (its connection was closed unanswered): it runs nothing.
          await again.waitForLog((l) => l.msg === "dead letter handled; removed from the list", 20_000);
          expect(await postDelivery(sandbox, `http://127.0.0.1:${port}`, id)).toMatchObject({ status: 200 });
        }
        again.kill("SIGTERM");
        expect(await again.exited).toEqual({ code: 0, signal: null });
        expect(again.logs().filter((l) => l.msg === "e2e: run")).toHaveLength(1);
        expect(said(mode)).toEqual([`done: ${content}`]);
        expect(errors(again)).toEqual([]);
      });
});
