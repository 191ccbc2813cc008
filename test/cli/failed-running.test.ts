/**
 * `bothost failed` and the status while an outgoing-webhook delivery is kept as a letter because
 * its handler still runs past the reply deadline (kept so that a kill loses nothing): that letter
 * is no failure. `failed list` leaves it out (`--all` acts on what the list shows, so a retry or
 * drop of every letter leaves it to its run), `failed show` says its run still goes on, and the
 * status counts none; a letter of a run that failed is listed as ever. The CLI runs as a
 * subprocess against the daemon's HTTP listener; the status is read over HTTP too.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, expect, it } from "vitest";
import type { DaemonStatus } from "../../src/http/daemon-status.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { assertBuilt, runCli } from "../support/cli.ts";
import { failedRun } from "../support/dead-letter.ts";
import { deferred } from "../support/deferred.ts";
import { freePort, type RunningDaemon, startDaemon } from "../support/http-daemon.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { postDelivery, webhookBot } from "../support/outgoing-delivery.ts";
import { HELPER, MEL, outgoingOrg, TOKEN } from "../support/outgoing-org.ts";

let sandbox: Sandbox | undefined;
let running: RunningDaemon | undefined;
let dir: string | undefined;
/** Lets the held handler return, so that the daemon's stop has nothing to wait for. */
let release: (() => void) | undefined;

beforeAll(assertBuilt);
afterEach(async () => {
  release?.();
  await running?.stop();
  await sandbox?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  running = undefined;
  sandbox = undefined;
  dir = undefined;
  release = undefined;
});

/** The CLI's config for the daemon at `url`, its state in `stateDir`: only state: and http: are read. */
async function cliConfig(sb: Sandbox, url: string, stateDir: string): Promise<string> {
  const file = join(dir!, "bothost.yaml");
  await writeFile(
    file,
    `server:\n  url: ${sb.url}\nstate:\n  path: ${stateDir}\nhttp:\n  listen: ${new URL(url).host}\nbots:\n` +
      `  helper:\n    module: ./helper.ts\n    email: ${HELPER}\n    api_key: any-key-0123456789\n`,
  );
  return file;
}

it("a delivery kept while its handler still runs is not listed, counted, retried or dropped as a failure; a failed run's letter is", {
  timeout: 60_000,
}, async () => {
  const gate = deferred();
  release = gate.resolve;
  let runs = 0;
  const definition = webhookBot((b) =>
    b.on("message", async (ctx) => {
      runs++;
      await gate.promise;
      await ctx.reply("late");
    }),
  );
  const clock = new ManualClock(Date.now());
  const port = await freePort();
  sandbox = await startSandbox({ org: outgoingOrg(port) });
  dir = await mkdtemp(join(tmpdir(), "bothost-failed-running-"));
  const stateDir = join(dir, "state");
  running = await startDaemon(
    sandbox,
    {
      helper: {
        email: HELPER,
        definition,
        extra: `outgoing_webhook:\n  path: /hooks/helper\n  token: \${HELPER_TOKEN}\n  reply_deadline: 8s`,
      },
    },
    { port, env: { HELPER_TOKEN: TOKEN }, clock, stateDir },
  );
  const d = running;
  // A run that failed for good: a real failure, listed and counted.
  const failed = await d.daemon.letters.of("helper").add(failedRun(1));
  const id = sandbox.control.sendAs(MEL, {
    type: "stream",
    to: "general",
    topic: "slow",
    content: "slow",
  }).id;
  const answer = postDelivery(sandbox, d.url, id);
  await expect.poll(() => runs).toBe(1);
  await clock.tick(8_000);
  expect(await answer).toEqual({ status: 200, body: { response_not_required: true } });
  // The delivery is kept in the store, marked as this daemon's run.
  const stored = await d.daemon.letters.of("helper").list();
  const kept = stored.find((l) => l.runningIn !== undefined)!;
  expect(kept).toMatchObject({ source: "webhook", event: { message: { id } } });

  const file = await cliConfig(sandbox, d.url, stateDir);
  const listed = await runCli(["failed", "list", "--json", "-c", file]);
  expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: "" });
  expect((JSON.parse(listed.stdout) as { id: string }[]).map((l) => l.id)).toEqual([failed.id]);
  const table = await runCli(["failed", "list", "-c", file]);
  expect(table.stdout).toMatch(new RegExp(`^ID .*\\n${failed.id} +queue +5 .*boom 1\\n$`));
  // Shown by its id (the log line that said it was kept names it), as a run still going on.
  const shown = await runCli(["failed", "show", kept.id, "-c", file]);
  expect(shown.code).toBe(0);
  expect(shown.stdout).toContain(`${kept.id}  (webhook, 0 attempts`);
  expect(shown.stdout).toContain(
    "its run still goes on in the daemon: no failure; the letter goes once the run is over",
  );
  const json = JSON.parse((await runCli(["failed", "show", kept.id, "--json", "-c", file])).stdout);
  expect(json).toMatchObject({ id: kept.id, running: true });

  // The status over HTTP counts the failed run's letter alone.
  const status = (await (await fetch(`${d.url}/admin/status`)).json()) as DaemonStatus;
  expect(status.bots[0]).toMatchObject({ deadLetters: 1 });
  expect(status.recentFailures.map((f) => f.id)).toEqual([failed.id]);

  // --all is what the list shows: the failed run's letter is dropped, the running one left to its run.
  const dropped = await runCli(["failed", "drop", "--all", "-c", file]);
  expect(dropped).toMatchObject({ code: 0, stdout: `Dropped 1: ${failed.id}\n` });
  expect((await d.daemon.letters.of("helper").list()).map((l) => l.id)).toEqual([kept.id]);
  expect(await runCli(["failed", "retry", "--all", "-c", file])).toMatchObject({
    code: 0,
    stdout: "No dead letters.\n",
  });

  gate.resolve();
  await expect.poll(() => d.daemon.letters.of("helper").list()).toEqual([]);
  expect(runs).toBe(1);
});
