/**
 * A durable dialog of an outgoing-webhook bot under `bothost run`, the process killed (a crash
 * point, `BOTHOST_FAILPOINTS`) right after an answer's append to the dialog's log landed: before
 * its message is marked handled in the delivery ledger, and before the server was answered. The
 * server retries a delivery whose connection broke, so the answer's delivery may come again to
 * the next start, once the dialog is over. The append was the answer's commit: the dialog goes on
 * from its log at the next start, and the repeat of the answer's delivery runs nothing. Killed
 * right after a `ctx.external` call returned, before the first question (the delivery unanswered,
 * nothing kept yet): the server's repeat of the delivery at the next start runs the handler again,
 * from the records of the killed run, so the call is not made again. Killed right after a
 * question asked elsewhere (`where`) went through the API, the delivery not answered yet: it was
 * kept before the question went, and the next start finds the question sent and waits for its
 * answer. On the file store, and on Redis when one answers (else skipped).
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { type CliProcess, spawnCli } from "../support/cli.ts";
import { type Backend, crashBackends } from "../support/crash-backends.ts";
import { closeAfterTest, useE2eCleanup } from "../support/e2e-daemon.ts";
import { freePort } from "../support/http-daemon.ts";
import { helperRunConfig, helperSaid, postDelivery } from "../support/outgoing-delivery.ts";
import { HELPER, MEL, outgoingOrg, TOKEN } from "../support/outgoing-org.ts";

const backends = await crashBackends("outgoing-dialog-crash");

useE2eCleanup();

/** The bot: its call outside (`ctx.external`) writes a line to `calls` each time it is made. */
const moduleText = (calls: string) => `import { appendFileSync } from "node:fs";
export default { setup(bot) {
  bot.command("order", async (ctx) => {
    await ctx.external("book", () => { appendFileSync(${JSON.stringify(calls)}, "book\\n"); return 1; });
    const size = await ctx.prompt("Which size?", { timeout: "1h" });
    const count = await ctx.prompt("How many?", { timeout: "1h" });
    await ctx.reply(count.text + " x " + size.text);
  });
  bot.command("private", async (ctx) => {
    const size = await ctx.prompt("Your size, privately?", { timeout: "1h", where: { direct: [ctx.event.message.sender_id] } });
    await ctx.reply("noted: " + size.text);
  });
} };
`;

/**
 * The sandbox (its outgoing-webhook bot pointed at a port chosen first) and the bot's project on
 * `backend`; `start(env)` spawns `bothost run` and resolves once the bot takes deliveries.
 */
async function setUp(backendFor: (dir: string) => Backend) {
  const port = await freePort();
  const sb = await startSandbox({ org: outgoingOrg(port) });
  closeAfterTest(() => sb.stop());
  const where = await mkdtemp(path.join(tmpdir(), "bothost-outgoing-dialog-crash-"));
  closeAfterTest(() => rm(where, { recursive: true, force: true }));
  const module = path.join(where, "bot.mjs");
  const calls = path.join(where, "calls");
  await writeFile(module, moduleText(calls));
  const file = path.join(where, "bothost.yaml");
  const state = backendFor(where).yaml;
  await writeFile(file, helperRunConfig({ serverUrl: sb.url, dir: where, port, module, state }));
  const env = { KEY: sb.control.apiKeyOf(HELPER), HELPER_TOKEN: TOKEN };
  const start = async (more: Record<string, string> = {}): Promise<CliProcess> => {
    const daemon = spawnCli(["run", "--config", file], { env: { ...env, ...more } });
    await daemon.waitForLog((l) => l.msg === "ready for outgoing-webhook deliveries", 20_000);
    return daemon;
  };
  const dm = (content: string) => sb.control.sendAs(MEL, { type: "direct", to: [HELPER], content }).id;
  /** How many times the bot's call outside was made. */
  const made = async () => (await readFile(calls, "utf8")).split("\n").filter(Boolean).length;
  return { sb, start, dm, made, url: `http://127.0.0.1:${port}` };
}

/** Killed with a delivery unanswered: the server's tries meet no listener, and it says so. */
async function killedUnanswered(sb: Sandbox, armed: CliProcess) {
  expect(await armed.exited).toEqual({ code: null, signal: "SIGKILL" });
  await sb.control.settleWebhooks();
  const failed = helperSaid(sb).filter((m) => m.startsWith("Failure!"));
  expect(failed).toEqual(["Failure! Bot is unavailable"]);
  return failed;
}

describe.each(backends)("on the %s", (_name, backendFor) => {
  it.each([
    ["answer-logged@1", "the first answer"],
    ["answer-logged@2", "the last answer"],
  ])(
    "killed at %s (%s): the dialog goes on once, a repeat of the answer's delivery runs nothing",
    {
      timeout: 60_000,
    },
    async (point) => {
      const { sb, start, dm, made, url } = await setUp(backendFor);
      const armed = await start({ BOTHOST_FAILPOINTS: point });
      dm("order");
      await expect.poll(() => helperSaid(sb), { timeout: 15_000 }).toEqual(["Which size?"]);
      const answers = [dm("large")];
      if (point.endsWith("@2")) {
        await expect.poll(() => helperSaid(sb), { timeout: 15_000 }).toEqual(["Which size?", "How many?"]);
        answers.push(dm("2"));
      }
      const failed = await killedUnanswered(sb, armed);

      const again = await start();
      // The dialog goes on from its log: the next question, once.
      await expect
        .poll(() => helperSaid(sb).at(-1), { timeout: 15_000 })
        .toBe(point.endsWith("@1") ? "How many?" : "2 x large");
      if (point.endsWith("@1")) {
        dm("2");
        await expect.poll(() => helperSaid(sb).at(-1), { timeout: 15_000 }).toBe("2 x large");
      }
      // The server's repeat of the killed delivery reaches the new start, the dialog over: the
      // answer is known as handled, and nothing runs.
      const killed = answers.at(-1)!;
      expect(await postDelivery(sb, url, killed)).toEqual({
        status: 200,
        body: { response_not_required: true },
      });
      await sb.control.settleWebhooks();
      const said = point.endsWith("@1")
        ? ["Which size?", ...failed, "How many?"]
        : ["Which size?", "How many?", ...failed];
      expect(helperSaid(sb)).toEqual([...said, "2 x large"]);
      expect(await made()).toBe(1);
      again.kill("SIGTERM");
      expect(await again.exited).toEqual({ code: 0, signal: null });
    },
  );

  it("killed at question-sent, its question sent elsewhere through the API before the delivery was answered: the dialog waits there all the same", {
    timeout: 60_000,
  }, async () => {
    const { sb, start } = await setUp(backendFor);
    const armed = await start({ BOTHOST_FAILPOINTS: "question-sent@1" });
    sb.control.sendAs(MEL, { type: "stream", to: "general", topic: "sizes", content: "@**Helper** private" });
    const failed = await killedUnanswered(sb, armed);
    expect(helperSaid(sb)).toEqual(["Your size, privately?", ...failed]);

    const again = await start();
    // The delivery was kept before its question went: the next start runs it again, the
    // question found sent, and the dialog waits in the direct message.
    await again.waitForLog((l) => l.msg === "dead letter handled; removed from the list", 15_000);
    sb.control.sendAs(MEL, { type: "direct", to: [HELPER], content: "large" });
    await expect.poll(() => helperSaid(sb).at(-1), { timeout: 15_000 }).toBe("noted: large");
    expect(helperSaid(sb)).toEqual(["Your size, privately?", ...failed, "noted: large"]);
    again.kill("SIGTERM");
    expect(await again.exited).toEqual({ code: 0, signal: null });
  });

  it("killed at external-made before the first question: the server's repeat of the delivery asks it, the call not made again", {
    timeout: 60_000,
  }, async () => {
    const { sb, start, dm, made, url } = await setUp(backendFor);
    const armed = await start({ BOTHOST_FAILPOINTS: "external-made@1" });
    const first = dm("order");
    const failed = await killedUnanswered(sb, armed);
    expect(await made()).toBe(1);

    const again = await start();
    // The server's repeat reaches the new start: the handler runs again, from its records.
    expect(await postDelivery(sb, url, first)).toEqual({ status: 200, body: { content: "Which size?" } });
    expect(await made()).toBe(1);
    dm("large");
    await expect.poll(() => helperSaid(sb).at(-1), { timeout: 15_000 }).toBe("How many?");
    dm("2");
    await expect.poll(() => helperSaid(sb).at(-1), { timeout: 15_000 }).toBe("2 x large");
    expect(await made()).toBe(1);
    // The answer of the repeat was read by the test, not posted by the server.
    expect(helperSaid(sb)).toEqual([...failed, "How many?", "2 x large"]);
    again.kill("SIGTERM");
    expect(await again.exited).toEqual({ code: 0, signal: null });
  });
});
