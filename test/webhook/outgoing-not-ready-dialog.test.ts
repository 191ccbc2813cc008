/**
 * The answer to a dialog's question, delivered while the outgoing-webhook bot is not ready (its
 * start held at `/register` by the sandbox) and past the reply deadline: the delivery is answered
 * without a reply and kept as a dead letter, replayed once the bot is ready. The replay is the
 * delivery's first run: the answer is filed under the question it answered, as if it had come
 * live, and the dialog goes on; it is not handled as an ordinary message.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { freePort, type RunningDaemon, startDaemon } from "../support/http-daemon.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { helperSaid, webhookBot } from "../support/outgoing-delivery.ts";
import { HELPER, MEL, outgoingOrg, TOKEN } from "../support/outgoing-org.ts";

let sandbox: Sandbox | undefined;
let running: Promise<RunningDaemon> | undefined;
let stateDir: string | undefined;

afterEach(async () => {
  sandbox?.control.delay(0);
  await (await running)?.stop();
  await sandbox?.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
  running = undefined;
  sandbox = undefined;
  stateDir = undefined;
});

const order = webhookBot((b) =>
  b.command("order", async (ctx) => {
    const size = await ctx.prompt("Which size?", { timeout: "1h" });
    const count = await ctx.prompt("How many?", { timeout: "1h" });
    await ctx.reply(`${count.text} x ${size.text}`);
  }),
);

it("an answer kept while the bot was not ready is filed under its question once it is", async () => {
  const clock = new ManualClock(Date.now());
  const port = await freePort();
  const sb = await startSandbox({ org: outgoingOrg(port) });
  sandbox = sb;
  const dir = await mkdtemp(join(tmpdir(), "bothost-held-dialog-"));
  stateDir = dir;
  const logs: Record<string, unknown>[] = [];
  const start = () =>
    startDaemon(
      sb,
      {
        helper: {
          email: HELPER,
          definition: order,
          extra: `outgoing_webhook:\n  path: /hooks/helper\n  token: \${HELPER_TOKEN}\n  reply_deadline: 8s`,
        },
      },
      { port, env: { HELPER_TOKEN: TOKEN }, clock, logs, stateDir: dir },
    );
  const dm = (content: string) => sb.control.sendAs(MEL, { type: "direct", to: [HELPER], content }).id;

  running = start();
  await running;
  dm("order");
  await expect.poll(() => helperSaid(sb)).toEqual(["Which size?"]);
  await (await running).stop();

  // Started again, its registration held: the answer's delivery waits, then is kept and answered.
  sb.control.delay(3_600_000, { paths: [/^\/register$/] });
  const from = logs.length;
  running = start();
  await sb.control.waitFor(() => sb.control.delayed() === 1);
  dm("large");
  await expect
    .poll(() => logs.filter((l) => l.msg === "outgoing webhook: delivery held until the bot is ready").length)
    .toBe(1);
  await clock.tick(8_000);
  await expect
    .poll(() =>
      logs
        .slice(from)
        .filter((l) => l.route === "/hooks/helper")
        .map((l) => l.status),
    )
    .toEqual([200]);
  await sb.control.settleWebhooks();

  // Ready: the kept answer answers the question, and the dialog asks the next one.
  sb.control.delay(0);
  await running;
  await expect.poll(() => helperSaid(sb)).toEqual(["Which size?", "How many?"]);
  dm("2");
  await expect.poll(() => helperSaid(sb)).toEqual(["Which size?", "How many?", "2 x large"]);
});
