/**
 * A bot whose lease is lost while a dialog's write is under way (its question sent, the
 * question's append refused by the fence): the write is not a store outage, so its tries are at
 * debug, as each event's lines of a lost lease are, and the loss is said in the one warn line.
 * Its waiting dialogs, listed afterwards, are said to be as last known where the bot is stopped.
 * One `bothost run` on a redis-server of its own (skipped without redis-server on PATH).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.ts";
import {
  type ClusterConfig,
  hasRedisServer,
  type Instance,
  startInstance,
  taggedModule,
  useOwnRedisCluster,
} from "../support/cluster.ts";
import { send } from "../support/e2e-daemon.ts";

const available = hasRedisServer();
if (!available) console.warn("lease lost during a dialog's write: redis-server is not on PATH: skipped");

const start = useOwnRedisCluster();
const prefix = "lease-lost-dialog-write";
const LOST =
  "lease lost: the bot stopped here; instance elsewhere runs it and takes over the events left in flight";

/** The cluster's bot b0 made one that asks "Which size?" on "ask". */
async function askingBot(config: ClusterConfig): Promise<void> {
  await taggedModule(config, "v1");
  await writeFile(
    path.join(path.dirname(config.file), "bot.mjs"),
    `export default { events: ["message"], setup(bot) {
  bot.on("message", (ctx) => ctx.event.message.content === "ask", async (ctx) => {
    await ctx.prompt("Which size?");
  });
} };\n`,
  );
}

/** Another instance holds the bot's lease now (`key`), for a minute. */
async function leaseElsewhere(url: string, key: string): Promise<void> {
  const direct = new Redis(url);
  try {
    await direct.set(key, "999:elsewhere", "PX", 60_000);
  } finally {
    direct.disconnect();
  }
}

/** The warn (and worse) lines about b0 the instance logged after its first `before` lines. */
function warnedOfB0(instance: Instance, before: number): string[] {
  return instance.proc
    .logs()
    .slice(before)
    .filter((l) => Number(l.level) >= 40 && l.bot === "b0")
    .map((l) => String(l.msg));
}

type Listed = { bot: string; dialogs: { deadline?: string }[]; stopped?: true }[];

/** The instance's dialogs listing. */
async function listed(instance: Instance): Promise<Listed> {
  const res = await fetch(`${instance.url}/admin/dialogs`);
  return (await res.json()) as Listed;
}

/** Bot b0's dialogs as the instance lists them. */
const waiting = async (instance: Instance) => (await listed(instance))[0]?.dialogs ?? [];

describe.skipIf(!available)("a lease lost while a dialog's question is written", () => {
  it("tries the fenced write at debug; only the lease's loss is said at warn", async () => {
    const { redis, sandbox, config } = await start({ prefix, ttl: "3s" });
    await taggedModule(config, "v1");
    await writeFile(
      path.join(path.dirname(config.file), "bot.mjs"),
      `export default { events: ["message"], setup(bot) {
  bot.on("message", (ctx) => ctx.event.message.content === "ask", async (ctx) => {
    ctx.log.info("asking");
    await ctx.prompt("Which size?");
  });
} };\n`,
    );
    const instance = await startInstance(config);
    expect(instance.started).toBe(1);
    // The question's send is held until the lease is elsewhere: its append is then fenced.
    sandbox.control.delay(3_600_000, { paths: [/^\/messages$/] });
    send(sandbox, "ask", "c0", "d");
    await instance.proc.waitForLog((l) => l.msg === "asking", 15_000);
    await sandbox.control.waitFor(() => sandbox.control.delayed() === 1, { timeoutMs: 15_000 });
    const before = instance.proc.logs().length;
    await leaseElsewhere(redis.url, `${prefix}#lease:b0`);
    sandbox.control.delay(0);
    const fencedWrite = (l: Record<string, unknown>) =>
      l.msg === "the state store failed a dialog's write; trying again" &&
      JSON.stringify(l.err ?? "").includes("STATE_FENCED");
    await instance.proc.waitForLog(fencedWrite, 20_000);
    await instance.proc.waitForLog((l) => l.msg === LOST, 20_000);
    expect(warnedOfB0(instance, before)).toEqual([LOST]);
  }, 60_000);

  it("cuts an answer's fenced write at the lease's stop at debug: the lease's loss is the one warn line", async () => {
    const { redis, sandbox, config } = await start({ prefix: `${prefix}-answer`, ttl: "3s" });
    await askingBot(config);
    const instance = await startInstance(config);
    send(sandbox, "ask", "c0", "d");
    // The question waits once its log is kept (a deadline listed), not once it shows on the
    // server: moved before, the lease would fence the question's own append.
    await expect
      .poll(async () => (await waiting(instance)).map((d) => d.deadline !== undefined), { timeout: 15_000 })
      .toEqual([true]);
    const before = instance.proc.logs().length;
    // Another instance holds the lease now: the answer's append is refused until the bot stops.
    await leaseElsewhere(redis.url, `${prefix}-answer#lease:b0`);
    send(sandbox, "large", "c0", "d");
    await instance.proc.waitForLog((l) => l.msg === LOST, 20_000);
    await instance.proc.waitForLog((l) => String(l.msg).startsWith("a dialog's write was cut off"), 20_000);
    expect(warnedOfB0(instance, before)).toEqual([LOST]);
  }, 60_000);

  it("lists the dialogs of a bot stopped by a Redis outage as last known, saying answers wait", async () => {
    const { redis, sandbox, config } = await start({ prefix: `${prefix}-list`, ttl: "3s" });
    await askingBot(config);
    const instance = await startInstance(config);
    send(sandbox, "ask", "c0", "d");
    const list = () => listed(instance);
    // Listed once its question is being sent, the dialog is begun once its log is kept: only
    // then does it wait, with a deadline (taken down before, Redis would leave no dialog).
    await expect
      .poll(async () => (await list())[0]?.dialogs.map((d) => d.deadline !== undefined), { timeout: 15_000 })
      .toEqual([true]);
    expect((await list())[0]?.stopped).toBeUndefined();
    // Redis out of reach: the lease cannot be renewed, and no other holder is known.
    await redis.down();
    await instance.proc.waitForLog((l) => String(l.msg).startsWith("lease lost"), 30_000);
    expect(await list()).toMatchObject([{ bot: "b0", stopped: true, dialogs: [{ step: 1 }] }]);
    const shown = await runCli(["dialogs", "--config", config.file], { env: config.env });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(
      "b0: 1 open dialog as last known here, where the bot is stopped (see bothost status): answers wait until it runs again",
    );
  }, 60_000);
});
