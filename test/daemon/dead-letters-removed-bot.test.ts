/**
 * A reload that removes a bot from the config leaves its dead letters in the store: the daemon's
 * letters (what `bothost failed` and the admin routes act on) still list them, marked, drop them,
 * and refuse to retry them.
 */
import { readFile, writeFile } from "node:fs/promises";
import { afterEach, expect, it } from "vitest";
import { type Booted, bootDaemon } from "../../src/daemon/boot.ts";
import { failedRun } from "../support/dead-letter.ts";
import { botEmail, orgWithBots, startE2eSandbox, useE2eCleanup, writeConfig } from "../support/e2e-daemon.ts";

useE2eCleanup();
let booted: Booted | undefined;
afterEach(async () => {
  await booted?.stop();
  booted = undefined;
});

it("a bot removed by a reload: its letters listed as unconfigured, dropped, not retried", async () => {
  const sandbox = await startE2eSandbox(orgWithBots(2));
  const config = await writeConfig(sandbox, { a: { email: botEmail(0) }, b: { email: botEmail(1) } });
  Object.assign(process.env, config.env);
  booted = await bootDaemon(config.file, { logLevel: "silent" });
  const { daemon } = booted;
  expect((await daemon.start()).started).toHaveLength(2);
  await daemon.letters.of("b").add(failedRun(1));
  await daemon.letters.of("b").add(failedRun(2));

  const onlyA = await writeConfig(sandbox, { a: { email: botEmail(0) } }, { stateDir: config.stateDir });
  await writeFile(config.file, await readFile(onlyA.file, "utf8"));
  expect((await daemon.reload()).remove).toEqual(["b"]);

  expect((await daemon.letters.list()).map((l) => [l.id, l.unconfigured])).toEqual([
    ["b/1", true],
    ["b/2", true],
  ]);
  expect(await daemon.letters.get("b/2")).toMatchObject({ id: "b/2", unconfigured: true });
  expect(await daemon.letters.retry({ all: true })).toEqual({
    done: [],
    missing: [],
    unconfigured: ["b/1", "b/2"],
  });
  expect((await daemon.letters.list()).every((l) => l.retryRequestedAt === undefined)).toBe(true);
  expect(await daemon.letters.drop({ ids: ["b/1"] })).toEqual({ done: ["b/1"], missing: [] });
  expect(await daemon.letters.drop({ all: true, bot: "b" })).toEqual({ done: ["b/2"], missing: [] });
  expect(await daemon.letters.list()).toEqual([]);
});
