/**
 * A reload that overlaps a stop: the stop comes while the reload halts the old version of a bot
 * (its handler still running), or while it starts the new versions one at a time. The stop
 * resolves with no bot polling and no queue of any bot is left registered on the server.
 */
import { writeFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { type Booted, bootDaemon } from "../../src/daemon/boot.ts";
import { botEmail, orgWithBots, startE2eSandbox, useE2eCleanup, writeConfig } from "../support/e2e-daemon.ts";
import { moduleText, send, useModuleFiles } from "./module-files.ts";

useE2eCleanup();
let booted: Booted | undefined;
afterEach(async () => {
  await booted?.stop();
  booted = undefined;
});

/** Handles to the handler of the old version below (the modules run in this process). */
const hold = globalThis as { slowEntered?: boolean; releaseSlow?: () => void };
afterEach(() => {
  hold.releaseSlow?.();
  hold.slowEntered = undefined;
  hold.releaseSlow = undefined;
});

/** A bot whose handler waits until the test releases it: halting it waits for that. */
const SLOW = `export default { events: ["message"], setup(bot) {
  bot.on("message", async () => {
    globalThis.slowEntered = true;
    await new Promise((resolve) => { globalThis.releaseSlow = resolve; });
  });
} };\n`;

describe("a stop during a reload", () => {
  it("leaves no bot polling: the new version never starts, the reload is refused", async () => {
    const sandbox = await startE2eSandbox(orgWithBots(2));
    const config = await writeConfig(sandbox, { a: { email: botEmail(0) }, b: { email: botEmail(1) } });
    const file = await useModuleFiles(config, { a: moduleText("v1"), b: SLOW });
    Object.assign(process.env, config.env);
    booted = await bootDaemon(config.file, { logLevel: "silent" });
    const { daemon } = booted;
    expect((await daemon.start()).started).toHaveLength(2);
    send(sandbox, "c1");
    await expect.poll(() => hold.slowEntered, { timeout: 15_000 }).toBe(true);

    // The reload sets up b's new version, then waits for the old one's handler to halt it.
    await writeFile(file("b"), moduleText("v2"));
    const reloading = daemon.reload().then(
      () => undefined,
      (err: unknown) => err as { code: string },
    );
    await expect.poll(() => sandbox.control.queues().length, { timeout: 15_000 }).toBe(1);
    const stopping = booted.stop();
    booted = undefined;
    // `a`'s queue deleted: the stop is halting the bots it found; only then may b's old version end.
    await expect.poll(() => sandbox.control.queues().length, { timeout: 15_000 }).toBe(0);
    hold.releaseSlow!();
    await stopping;
    const refused = await reloading;

    // Nothing registered afterwards: a version the reload started would be registered by now, as
    // the reload settles only after the bots it starts have their queues (`#startBots` awaits it).
    expect(sandbox.control.queues()).toEqual([]);
    const registrations = sandbox.control.requests.filter(
      (r) => r.method === "POST" && r.path === "/register",
    );
    expect(registrations).toHaveLength(2); // a's and b's first versions, at the start
    expect(refused).toMatchObject({ code: "RELOAD_REFUSED" });
    // b's old version halted and gone, its new one never added: only `a` is left, stopped.
    expect(daemon.bots.map((b) => [b.name, b.status.state])).toEqual([["a", "stopped"]]);
  });
});

describe("a stop while a reload starts the new versions", () => {
  it("starts none that waited for its turn: no queue is left registered", async () => {
    const sandbox = await startE2eSandbox(orgWithBots(2));
    const config = await writeConfig(
      sandbox,
      { a: { email: botEmail(0) }, b: { email: botEmail(1) } },
      { global: "registration_concurrency: 1" },
    );
    const file = await useModuleFiles(config, { a: moduleText("v1"), b: moduleText("v1") });
    Object.assign(process.env, config.env);
    booted = await bootDaemon(config.file, { logLevel: "silent" });
    const { daemon } = booted;
    expect((await daemon.start()).started).toHaveLength(2);

    // a's new version registers first and is held there; b's waits for its turn.
    for (const name of ["a", "b"]) await writeFile(file(name), moduleText("v2"));
    sandbox.control.delay(600_000, { paths: ["/register"] });
    const reloading = daemon.reload().then(
      () => undefined,
      (err: unknown) => err as { code: string },
    );
    await expect.poll(() => sandbox.control.delayed(), { timeout: 15_000 }).toBe(1);
    const stopping = booted.stop();
    booted = undefined;
    // The stop halted b's new version (added, not started yet: "idle" until then).
    const b = () => daemon.bots.find((r) => r.name === "b")?.status.state;
    await expect.poll(b, { timeout: 15_000 }).not.toBe("idle");
    sandbox.control.delay(0);
    await stopping;
    await reloading;

    expect(sandbox.control.queues()).toEqual([]);
    // b's new version never registered: its one registration is its first version's, at the start.
    const ofB = sandbox.control.requests.filter(
      (r) => r.method === "POST" && r.path === "/register" && r.email === botEmail(1),
    );
    expect(ofB).toHaveLength(1);
  });
});
