/**
 * An outgoing-webhook bot under `bothost run` whose handler outlasts its reply_deadline: the
 * delivery is answered `{"response_not_required": true}` at the deadline while the handler still
 * runs, and the server never sends an answered delivery again. The process is killed (SIGKILL)
 * after that answer and before the handler returns, then started again on its state: the delivery
 * must have been kept (a dead letter marked for replay, which `bothost failed list` shows with the
 * daemon down), and the new start runs its handler again, its reply posted once in all.
 *
 * The handler waits on gates this test serves over HTTP (`GATE`): the first process is killed
 * while it waits on one, before its reply or after it; the next process finds every gate open.
 * Likewise a handler that replies in time and goes on: its reply is the answer, the rest of its
 * run must survive the kill.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
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
let gates: Gates | undefined;

beforeAll(assertBuilt);
afterEach(async () => {
  await killAll();
  await gates?.close();
  await sandbox?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  sandbox = undefined;
  dir = undefined;
  gates = undefined;
});

/** Gates the handler waits on (`GET /<name>`): held until opened, answered at once after. */
interface Gates {
  url: string;
  /** Resolves once a request for gate `name` came (it waits there). */
  reached(name: string): Promise<void>;
  open(name: string): void;
  /** Every gate answers at once from now on. */
  openAll(): void;
  close(): Promise<void>;
}

async function startGates(): Promise<Gates> {
  const held = new Map<string, ServerResponse[]>();
  const opened = new Set<string>();
  const waiters = new Map<string, (() => void)[]>();
  let all = false;
  const server: Server = createServer((req, res) => {
    const name = (req.url ?? "/").slice(1);
    if (all || opened.has(name)) return void res.end("open");
    held.set(name, [...(held.get(name) ?? []), res]);
    for (const wake of waiters.get(name) ?? []) wake();
    waiters.delete(name);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const open = (name: string) => {
    opened.add(name);
    for (const res of held.get(name) ?? []) res.end("open");
    held.delete(name);
  };
  return {
    url: `http://127.0.0.1:${port}`,
    reached: (name) =>
      held.has(name)
        ? Promise.resolve()
        : new Promise((resolve) => waiters.set(name, [...(waiters.get(name) ?? []), resolve])),
    open,
    openAll: () => {
      all = true;
      for (const name of [...held.keys()]) open(name);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// Each run logs its start, waits at gate "before" (not in an "early" topic: it replies in time),
// replies, waits at gate "after", replies again in an "early" topic, and returns.
const moduleText = `export default { setup(bot) {
  bot.on("message", async (ctx) => {
    ctx.log.info({ replayed: ctx.replayed }, "test: the handler runs");
    const topic = ctx.event.message.subject;
    if (!topic.startsWith("early")) await fetch(process.env.GATE + "/before");
    await ctx.reply("late hi, " + topic);
    await fetch(process.env.GATE + "/after");
    if (topic.startsWith("early")) await ctx.reply("done, " + topic);
  });
} };
`;

/** A sandbox, the gates, and a config for the helper bot (reply_deadline 1 s) in a temp folder. */
async function setUp() {
  const port = await freePort();
  const sb = await startSandbox({ org: outgoingOrg(port) });
  sandbox = sb;
  gates = await startGates();
  dir = await mkdtemp(path.join(tmpdir(), "bothost-late-crash-"));
  const module = path.join(dir, "bot.mjs");
  await writeFile(module, moduleText);
  const file = path.join(dir, "bothost.yaml");
  await writeFile(file, helperRunConfig({ serverUrl: sb.url, dir, port, module }));
  const env = { KEY: sb.control.apiKeyOf(HELPER), HELPER_TOKEN: TOKEN, GATE: gates.url };
  const run = () => spawnCli(["run", "--config", file], { env });
  const list = async () => {
    const listed = await runCli(["failed", "list", "--json", "-c", file], { env });
    expect(listed.stderr).toBe("");
    expect(listed.code).toBe(0);
    return JSON.parse(listed.stdout) as Array<Record<string, unknown>>;
  };
  const mention = (topic: string) =>
    sb.control.sendAs(MEL, { type: "stream", to: "general", topic, content: "@**Helper** hello" }).id;
  const replies = (topic: string) => sb.control.messages().filter((m) => m.content === `late hi, ${topic}`);
  return { sb, gates, run, list, mention, replies };
}

const answered = (daemon: CliProcess) =>
  daemon.logs().filter((l) => l.route === "/hooks/helper" && l.msg === "http request");
const runs = (daemon: CliProcess) => daemon.logs().filter((l) => l.msg === "test: the handler runs");
const failures = (sb: Sandbox) =>
  sb.control.messages().filter((m) => String(m.content).startsWith("Failure!"));

it.each([
  ["before its late reply", "before"],
  ["after its late reply went out through the API", "after"],
] as const)(
  "a delivery whose handler outlasts reply_deadline survives a kill -9 after the deadline's answer (%s): replayed at the next start, its reply posted once",
  { timeout: 60_000 },
  async (_, killedAt) => {
    const { sb, gates, run, list, mention, replies } = await setUp();
    const first = run();
    await first.waitForLog((l) => l.msg === "daemon started", 20_000);
    const topic = `killed ${killedAt}`;
    const id = mention(topic);
    await gates.reached("before");
    // Answered at the reply deadline, the handler still waiting: the server is done with it.
    await first.waitForLog((l) => l.route === "/hooks/helper" && l.msg === "http request", 20_000);
    expect(answered(first).map((l) => l.status)).toEqual([200]);
    await sb.control.settleWebhooks();
    if (killedAt === "after") {
      gates.open("before");
      await gates.reached("after");
      expect(replies(topic)).toHaveLength(1);
    }
    first.kill("SIGKILL");
    expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
    expect(runs(first)).toHaveLength(1);
    expect(replies(topic)).toHaveLength(killedAt === "after" ? 1 : 0);

    // With the daemon down, the state holds the delivery, marked for replay.
    const letters = await list();
    expect(letters).toMatchObject([{ bot: "helper", source: "webhook", event: { message: { id } } }]);
    expect(letters[0]!.retryRequestedAt).toEqual(expect.any(String));

    // The next start runs the handler again; the reply is posted once in all.
    gates.openAll();
    const again = run();
    await again.waitForLog((l) => l.msg === "dead letter handled; removed from the list", 20_000);
    expect(runs(again)).toHaveLength(1);
    expect(replies(topic)).toHaveLength(1);
    expect(replies(topic)[0]).not.toMatchObject({ client: "OutgoingWebhookResponse" });
    expect(failures(sb)).toEqual([]);
    again.kill("SIGTERM");
    expect(await again.exited).toEqual({ code: 0, signal: null });
    expect(await list()).toEqual([]);
  },
);

it("a delivery whose handler outlasts reply_deadline, not killed: its letter is gone once the handler returns, nothing runs again at the next start", {
  timeout: 60_000,
}, async () => {
  const { sb, gates, run, list, mention, replies } = await setUp();
  const first = run();
  await first.waitForLog((l) => l.msg === "daemon started", 20_000);
  mention("not killed");
  await gates.reached("before");
  await first.waitForLog((l) => l.route === "/hooks/helper" && l.msg === "http request", 20_000);
  await sb.control.settleWebhooks();
  gates.openAll();
  await sb.control.waitFor(() => replies("not killed").length === 1);
  first.kill("SIGTERM");
  expect(await first.exited).toEqual({ code: 0, signal: null });
  expect(await list()).toEqual([]);

  const again = run();
  await again.waitForLog((l) => l.msg === "daemon started", 20_000);
  // The next start replays nothing: the handler does not run, no letter is handled.
  again.kill("SIGTERM");
  expect(await again.exited).toEqual({ code: 0, signal: null });
  expect(runs(again)).toEqual([]);
  expect(again.logs().filter((l) => l.msg === "replaying a dead letter")).toEqual([]);
  expect(replies("not killed")).toHaveLength(1);
  expect(failures(sb)).toEqual([]);
});

it("a delivery whose handler replies in time and goes on survives a kill -9 after its answer: replayed at the next start, the reply not made again, the rest of the run made once", {
  timeout: 60_000,
}, async () => {
  const { sb, gates, run, list, mention, replies } = await setUp();
  const first = run();
  await first.waitForLog((l) => l.msg === "daemon started", 20_000);
  const topic = "early reply";
  const id = mention(topic);
  await gates.reached("after");
  // Answered with the reply while the handler waits: the server posted it, and is done with it.
  await first.waitForLog((l) => l.route === "/hooks/helper" && l.msg === "http request", 20_000);
  await sb.control.settleWebhooks();
  expect(replies(topic)).toMatchObject([{ client: "OutgoingWebhookResponse" }]);
  first.kill("SIGKILL");
  expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
  expect(await list()).toMatchObject([{ bot: "helper", source: "webhook", event: { message: { id } } }]);

  gates.openAll();
  const again = run();
  await again.waitForLog((l) => l.msg === "dead letter handled; removed from the list", 20_000);
  expect(runs(again)).toHaveLength(1);
  expect(replies(topic)).toHaveLength(1);
  expect(sb.control.messages().filter((m) => m.content === `done, ${topic}`)).toHaveLength(1);
  expect(failures(sb)).toEqual([]);
  again.kill("SIGTERM");
  expect(await again.exited).toEqual({ code: 0, signal: null });
  expect(await list()).toEqual([]);
});
