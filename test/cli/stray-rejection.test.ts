/**
 * A promise bot code lets fail with nothing awaiting it (a call its handler did not await) is
 * logged by `bothost run`, which goes on: Node.js would otherwise end the process, every bot
 * with it, with a stack trace on stderr. A real CLI process on the embedded sandbox.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, expect, it } from "vitest";
import { STRAY_REJECTION_LINE } from "../../src/cli/stray-rejections.ts";
import { assertBuilt, killAll, spawnCli } from "../support/cli.ts";

let dir = "";
beforeAll(() => assertBuilt());
afterEach(async () => {
  await killAll();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it("bothost run logs a rejection nothing awaited, and goes on until it is stopped", async () => {
  dir = await mkdtemp(join(tmpdir(), "bothost-stray-"));
  await writeFile(
    join(dir, "careless.mjs"),
    'export default { setup(bot) { bot.onStart(() => { Promise.reject(new Error("not awaited")); }); } };\n',
  );
  const config = join(dir, "bothost.yaml");
  await writeFile(
    config,
    "server:\n  url: sandbox\nstate:\n  path: ./state\nbots:\n  careless:\n    module: ./careless.mjs\n    email: bot@sandbox.example\n",
  );
  const daemon = spawnCli(["run", "--config", config]);
  const line = await daemon.waitForLog((l) => l.msg === STRAY_REJECTION_LINE);
  expect(line).toMatchObject({ level: 50, err: { message: "not awaited" } });
  await daemon.waitForLog((l) => l.msg === "daemon started");
  daemon.kill("SIGTERM");
  expect(await daemon.exited).toEqual({ code: 0, signal: null });
  expect(daemon.stderr()).toBe("");
});
