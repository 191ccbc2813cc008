/**
 * While a reload restarts bots (each old version halted in turn, its handlers waited for up to
 * `shutdown_timeout`), every configured bot stays in `/admin/status` and `/readyz`, with a true
 * state: `reloading` until its new version is added, never `standby` in a solo daemon, and
 * `/readyz` never answers ready with no bot.
 */
import { writeFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { type Booted, bootDaemon } from "../../src/daemon/boot.ts";
import type { DaemonStatus } from "../../src/http/daemon-status.ts";
import type { BotReadiness } from "../../src/http/readiness.ts";
import { botEmail, orgWithBots, startE2eSandbox, useE2eCleanup, writeConfig } from "../support/e2e-daemon.ts";
import { moduleText, send, useModuleFiles } from "./module-files.ts";

useE2eCleanup();
let booted: Booted | undefined;
afterEach(async () => {
  await booted?.stop();
  booted = undefined;
});

/** Handles to the handler of the old version below (the modules run in this process). */
const hold = globalThis as { slowEntered?: boolean; releaseSlow?: () => void; hooked?: number };
afterEach(() => {
  hold.releaseSlow?.();
  hold.slowEntered = undefined;
  hold.releaseSlow = undefined;
  hold.hooked = undefined;
});

/**
 * A bot whose handler waits until the test releases it: halting it waits for that. Its inbound
 * webhook counts its runs.
 */
const SLOW = `export default { events: ["message"], setup(bot) {
  bot.webhook("hook", { verify: { type: "none" } }, () => { globalThis.hooked = (globalThis.hooked ?? 0) + 1; });
  bot.on("message", async () => {
    globalThis.slowEntered = true;
    await new Promise((resolve) => { globalThis.releaseSlow = resolve; });
  });
} };\n`;

/** A daemon of `modules` (bot i on account i), started, with its HTTP routes. */
async function start(modules: Record<string, string>) {
  const sandbox = await startE2eSandbox(orgWithBots(Object.keys(modules).length));
  const bots = Object.fromEntries(Object.keys(modules).map((name, i) => [name, { email: botEmail(i) }]));
  const config = await writeConfig(sandbox, bots, { global: "http:\n  listen: 127.0.0.1:0" });
  const file = await useModuleFiles(config, modules);
  Object.assign(process.env, config.env);
  booted = await bootDaemon(config.file, { logLevel: "silent" });
  const { daemon } = booted;
  expect((await daemon.start()).started).toHaveLength(Object.keys(modules).length);
  const get = async (path: string, init?: RequestInit) => {
    const res = await fetch(`${daemon.http!.url}${path}`, init);
    return { status: res.status, body: (await res.json()) as unknown };
  };
  const hook = (bot: string) =>
    get(`/webhooks/${bot}/hook`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
  const readyz = async () => {
    const { status, body } = await get("/readyz");
    return { status, ...(body as { ready: boolean; bots: BotReadiness[] }) };
  };
  const states = async () =>
    ((await get("/admin/status")).body as DaemonStatus).bots.map((b) => [b.name, b.state]);
  return { sandbox, daemon, file, readyz, states, hook };
}

describe("during a reload that restarts a bot", () => {
  it("a single-bot daemon keeps the bot in /readyz and the status, reloading, not ready", async () => {
    const d = await start({ a: SLOW });
    send(d.sandbox, "c0");
    await expect.poll(() => hold.slowEntered, { timeout: 15_000 }).toBe(true);

    await writeFile(d.file("a"), moduleText("v2"));
    const reloading = d.daemon.reload();
    // The reload waits for the old version's handler: its queue is deleted once it halts it.
    await expect.poll(() => d.sandbox.control.queues().length, { timeout: 15_000 }).toBe(0);
    expect(await d.states()).toEqual([["a", "reloading"]]);
    const ready = await d.readyz();
    expect(ready.status).toBe(503);
    expect(ready.bots.map((b) => [b.bot, b.state, b.ready])).toEqual([["a", "reloading", false]]);
    expect(ready.bots[0]!.reason).toMatch(/reload/);
    // Its old version runs nothing new meanwhile: the sender tries again.
    expect(await d.hook("a")).toEqual({
      status: 503,
      body: { error: "bot a is not running here now; try again" },
    });
    expect(hold.hooked).toBeUndefined();

    hold.releaseSlow!();
    expect((await reloading).restart).toEqual(["a"]);
    await expect.poll(async () => (await d.readyz()).status, { timeout: 15_000 }).toBe(200);
    expect(await d.states()).toEqual([["a", "running"]]);
  });

  it("a bot halted before another one's old version keeps its place: reloading, never standby", async () => {
    const d = await start({ a: moduleText("v1"), b: SLOW });
    send(d.sandbox, "c1");
    await expect.poll(() => hold.slowEntered, { timeout: 15_000 }).toBe(true);

    for (const name of ["a", "b"]) await writeFile(d.file(name), moduleText("v2"));
    const reloading = d.daemon.reload();
    // a's old version halted (its queue deleted); b's waits for its handler.
    await expect.poll(() => d.sandbox.control.queues().length, { timeout: 15_000 }).toBe(0);
    const ready = await d.readyz();
    expect(ready.status).toBe(503);
    expect(ready.bots.map((b) => [b.bot, b.state])).toEqual([
      ["a", "reloading"],
      ["b", "reloading"],
    ]);
    expect(await d.states()).toEqual([
      ["a", "reloading"],
      ["b", "reloading"],
    ]);

    hold.releaseSlow!();
    expect((await reloading).restart).toEqual(["a", "b"]);
    await expect.poll(async () => (await d.readyz()).status, { timeout: 15_000 }).toBe(200);
  });
});
