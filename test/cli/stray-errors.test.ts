/**
 * A promise bot code lets fail with nothing awaiting it (a call its handler did not await), and an
 * error it throws in a timer of its own, are logged by `bothost run`, which goes on: Node.js would
 * otherwise end the process, every bot with it, with a stack trace on stderr. A real CLI process
 * on the embedded sandbox.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, expect, it } from "vitest";
import { STRAY_REJECTION_LINE, STRAY_THROW_LINE, UNCAUGHT_LINE } from "../../src/cli/stray-errors.ts";
import { assertBuilt, killAll, spawnCli } from "../support/cli.ts";

let dir = "";
beforeAll(() => assertBuilt());
afterEach(async () => {
  await killAll();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A folder with the bot `careless` (`source`) on the embedded sandbox; returns its config's path. */
async function project(source: string): Promise<string> {
  dir = await mkdtemp(join(tmpdir(), "bothost-stray-"));
  await writeFile(join(dir, "careless.mjs"), source);
  const config = join(dir, "bothost.yaml");
  await writeFile(
    config,
    "server:\n  url: sandbox\nstate:\n  path: ./state\nbots:\n  careless:\n    module: ./careless.mjs\n    email: bot@sandbox.example\n",
  );
  return config;
}

it("bothost run logs a rejection nothing awaited and an error thrown in a bot's timer, and goes on until it is stopped", async () => {
  const config = await project(
    [
      "export default {",
      "  setup(bot) {",
      "    bot.onStart(() => {",
      '      Promise.reject(new Error("not awaited"));',
      '      setTimeout(() => { throw new TypeError("thrown in a timer"); }, 0);',
      "    });",
      "  },",
      "};",
      "",
    ].join("\n"),
  );
  const daemon = spawnCli(["run", "--config", config]);
  const line = await daemon.waitForLog((l) => l.msg === STRAY_REJECTION_LINE);
  expect(line).toMatchObject({ level: 50, err: { message: "not awaited" } });
  // Where in the bot's file it was thrown, not a stack trace on stderr.
  const thrown = await daemon.waitForLog((l) => l.msg === STRAY_THROW_LINE);
  expect(thrown).toMatchObject({
    level: 50,
    at: `${join(dir, "careless.mjs")}:5:32`,
    err: { message: "thrown in a timer" },
  });
  await daemon.waitForLog((l) => l.msg === "daemon started");
  daemon.kill("SIGTERM");
  expect(await daemon.exited).toEqual({ code: 0, signal: null });
  expect(daemon.stderr()).toBe("");
});

it("bothost run ends, logged at fatal with exit code 1, on an error thrown where no frame is the user's", async () => {
  // JSON.parse called by the timer itself: its stack holds Node's frames alone.
  const config = await project(
    'export default { setup(bot) { bot.onStart(() => { setTimeout(JSON.parse, 0, "{"); }); } };\n',
  );
  const daemon = spawnCli(["run", "--config", config]);
  const line = await daemon.waitForLog((l) => l.msg === UNCAUGHT_LINE);
  expect(line).toMatchObject({ level: 60, err: { type: "SyntaxError" } });
  expect(await daemon.exited).toEqual({ code: 1, signal: null });
  expect(daemon.stderr()).toBe("");
});
