/**
 * Outgoing-webhook deliveries out of id order: the server retries a delivery after a timeout or a
 * connection error by putting it back on its queue, behind deliveries queued meanwhile, so a
 * message can arrive after a later one has finished. It is handled all the same; a repeated
 * delivery of a handled message is still dropped, after a restart too. One older than the last
 * 1000 messages handled (below the ledger's floor) is dropped, its drop logged and counted apart
 * from the repeats (the status's `late`, `bothost_late_deliveries_total`).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterEach, expect, it } from "vitest";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import { BELOW_FLOOR_LINE } from "../../src/pipeline/webhook-ledger.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { FileStore } from "../../src/state/file-store.ts";
import { freePort, type RunningDaemon, startDaemon } from "../support/http-daemon.ts";
import { HELPER, MEL, outgoingOrg, TOKEN } from "../support/outgoing-org.ts";
import { parsePrometheus, sampleValue } from "../support/prometheus-text.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The contents the bot's handler saw, in order. */
const seen: string[] = [];
const echo = {
  setup(bot: { on(type: "message", fn: (ctx: EchoContext) => unknown): void }) {
    bot.on("message", (ctx) => {
      seen.push(ctx.event.message.content);
      return ctx.reply(`You said: ${ctx.event.message.content}`);
    });
  },
} as unknown as BotDefinition<never, never>;
type EchoContext = { event: { message: { content: string } }; reply(content: string): Promise<unknown> };

async function sandboxWithHelper(port: number): Promise<Sandbox> {
  const sandbox = await startSandbox({ org: outgoingOrg(port) });
  cleanups.push(() => sandbox.stop());
  return sandbox;
}

async function daemon(sandbox: Sandbox, port: number, stateDir: string): Promise<RunningDaemon> {
  const running = await startDaemon(
    sandbox,
    {
      helper: {
        email: HELPER,
        definition: echo,
        extra: `outgoing_webhook:\n  path: /hooks/helper\n  token: \${HELPER_TOKEN}`,
      },
    },
    { port, env: { HELPER_TOKEN: TOKEN }, stateDir },
  );
  cleanups.push(() => running.stop());
  return running;
}

/** A message that does not mention the bot (the sandbox delivers nothing itself), as a payload. */
async function payload(sandbox: Sandbox, topic: string, content: string) {
  const id = sandbox.control.sendAs(MEL, { type: "stream", to: "general", topic, content }).id;
  const key = sandbox.control.apiKeyOf(HELPER);
  const res = await request(`${sandbox.url}/api/v1/messages/${id}?apply_markdown=false`, {
    headers: { authorization: `Basic ${Buffer.from(`${HELPER}:${key}`).toString("base64")}` },
  });
  const { message } = (await res.body.json()) as { message: Record<string, unknown> };
  return {
    data: content,
    message,
    bot_email: HELPER,
    bot_full_name: "Helper",
    token: TOKEN,
    trigger: "mention",
  };
}

/** A sandbox with the helper bot and a state directory for its daemon; nothing seen yet. */
async function world() {
  seen.length = 0;
  const port = await freePort();
  const stateDir = await mkdtemp(join(tmpdir(), "bothost-order-"));
  cleanups.push(() => rm(stateDir, { recursive: true, force: true }));
  return { port, stateDir, sandbox: await sandboxWithHelper(port) };
}

async function deliver(running: RunningDaemon, body: unknown): Promise<unknown> {
  const res = await request(`${running.url}/hooks/helper`, {
    method: "POST",
    headers: { "content-type": "application/json", "user-agent": "ZulipOutgoingWebhook/test" },
    body: JSON.stringify(body),
  });
  return res.body.json();
}

it("a delivery that comes after a later message finished is handled; a repeat is dropped, after a restart too", async () => {
  const { port, stateDir, sandbox } = await world();
  let running = await daemon(sandbox, port, stateDir);

  const first = await payload(sandbox, "a", "first");
  const second = await payload(sandbox, "b", "second");
  // The first delivery of `first` timed out and went back on the server's queue, behind `second`.
  expect(await deliver(running, second)).toEqual({ content: "You said: second" });
  expect(await deliver(running, first)).toEqual({ content: "You said: first" });
  expect(seen).toEqual(["second", "first"]);

  // A restart: the bot knows both as handled (the exchange's in-memory answers are gone).
  await running.stop();
  cleanups.pop();
  running = await daemon(sandbox, port, stateDir);
  expect(await deliver(running, first)).toEqual({ response_not_required: true });
  expect(await deliver(running, second)).toEqual({ response_not_required: true });
  expect(seen).toEqual(["second", "first"]);

  // And out of order again after the restart, below and between what it handled before.
  const third = await payload(sandbox, "c", "third");
  const fourth = await payload(sandbox, "d", "fourth");
  expect(await deliver(running, fourth)).toEqual({ content: "You said: fourth" });
  expect(await deliver(running, third)).toEqual({ content: "You said: third" });
  expect(await deliver(running, fourth)).toEqual({ content: "You said: fourth" }); // the exchange's answer
  expect(seen).toEqual(["second", "first", "fourth", "third"]);
  expect(running.logs.filter((l) => (l.level as number) >= 40)).toEqual([]);
});

it("a delivery below the floor (older than the last 1000 handled) is dropped with a warning; a repeat is not", async () => {
  const { port, stateDir, sandbox } = await world();
  let running = await daemon(sandbox, port, stateDir);
  const late = await payload(sandbox, "a", "retried very late");
  const last = await payload(sandbox, "b", "the last one let go of");
  expect(await deliver(running, last)).toEqual({ content: "You said: the last one let go of" });
  await running.stop();
  cleanups.pop();
  // What 1000 newer messages handled since leave: the floor at `last`, the last id let go of.
  const store = await FileStore.open(stateDir);
  await store
    .namespace("helper")
    .namespace("runtime")
    .set("cursor", last.message.id as number);
  await store.close();
  running = await daemon(sandbox, port, stateDir);
  const dropped = () => running.logs.filter((l) => l.msg === BELOW_FLOOR_LINE);
  // The floor itself was handled: an ordinary repeat.
  expect(await deliver(running, last)).toEqual({ response_not_required: true });
  expect(dropped()).toEqual([]);
  // Below it, not known handled: dropped, and said so (its id, no content).
  expect(await deliver(running, late)).toEqual({ response_not_required: true });
  expect(seen).toEqual(["the last one let go of"]);
  expect(dropped()).toMatchObject([{ level: 40, messageId: late.message.id, floor: last.message.id }]);
  expect(JSON.stringify(dropped())).not.toContain("very late");
  // Counted apart from the repeat: in the bot's status and at /metrics.
  const { duplicates, late: lateCount } = running.daemon.bots[0]!.status;
  expect({ duplicates, late: lateCount }).toEqual({ duplicates: 1, late: 1 });
  const metrics = parsePrometheus(await (await request(`${running.url}/metrics`)).body.text());
  expect(sampleValue(metrics, "bothost_late_deliveries_total", { bot: "helper" })).toBe(1);
});
