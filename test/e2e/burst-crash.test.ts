/**
 * kill -9 in the middle of a burst: 2,000 messages arrive while the bot's queue is parked, the
 * daemon is killed once a few hundred are handled, and a restart on the same state handles the
 * rest. Each message's handler adds one to a state key of its own, staged with its run: after the
 * restart every key must be exactly 1 (none lost, none counted twice), whatever the kill cut
 * (handlers mid-run, a turn's completions not yet committed, reads ahead of the ledger's cursor).
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FileStore } from "../../src/state/file-store.ts";
import { repoRoot, spawnCli } from "../support/cli.ts";
import { botEmail, orgWithBots, send, startE2eSandbox, useE2eCleanup } from "../support/e2e-daemon.ts";

const MARKER = path.join(repoRoot, "test/fixtures/e2e/burst-marker.mjs");
const BURST = 2_000;

useE2eCleanup();

/** Each message's count in the bot's state, read from the store itself (the daemon stopped). */
async function counts(statePath: string, ids: readonly number[]): Promise<Map<number, number>> {
  const store = await FileStore.open(statePath, { autoFlushMs: 0 });
  try {
    const kv = store.namespace("marker").namespace("kv");
    const out = new Map<number, number>();
    for (const id of ids) out.set(id, ((await kv.get(`m${id}`)) as number | undefined) ?? 0);
    return out;
  } finally {
    await store.close();
  }
}

const withCount = (map: Map<number, number>, n: number) =>
  [...map].filter(([, c]) => c === n).map(([id]) => id);

describe("kill -9 in the middle of a burst", () => {
  it("every message of the burst is counted exactly once after the restart", async () => {
    const sandbox = await startE2eSandbox(orgWithBots(1));
    const dir = await mkdtemp(path.join(tmpdir(), "bothost-burst-crash-"));
    const statePath = path.join(dir, "state");
    const file = path.join(dir, "bothost.yaml");
    const env = { E2E_KEY: sandbox.control.apiKeyOf(botEmail(0)) };
    await writeFile(
      file,
      [
        `server:\n  url: ${sandbox.url}`,
        `state:\n  path: ${statePath}`,
        "log:\n  level: info\n  pretty: false",
        "shutdown_timeout: 5s",
        "bots:",
        `  marker:\n    module: ${MARKER}\n    email: ${botEmail(0)}\n    api_key: \${E2E_KEY}`,
        // The whole burst may be replayed after the kill (the default replays 1,000 at most).
        "    replay: { max_messages: 5000 }",
      ].join("\n"),
    );

    const first = spawnCli(["run", "--config", file], { env });
    await first.waitForLog((l) => l.msg === "daemon started");
    const ids: number[] = [];
    for (let i = 0; i < BURST; i++) ids.push(send(sandbox, `burst ${i}`, "c0", `topic ${i % 20}`));
    const handledBy = (proc: typeof first) => proc.logs().filter((l) => l.msg === "e2e: burst").length;
    await expect.poll(() => handledBy(first), { timeout: 30_000 }).toBeGreaterThanOrEqual(300);
    first.kill("SIGKILL");
    expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });

    const atKill = await counts(statePath, ids);
    const committed = withCount(atKill, 1).length;
    // The kill fell inside the burst: some counted, not all, none twice.
    expect(committed).toBeGreaterThan(0);
    expect(committed).toBeLessThan(BURST);
    expect(withCount(atKill, 2)).toEqual([]);

    const second = spawnCli(["run", "--config", file], { env });
    await second.waitForLog((l) => l.msg === "daemon started");
    const missing = new Set(withCount(atKill, 0));
    await expect
      .poll(() => second.logs().filter((l) => l.msg === "e2e: burst" && missing.has(l.id as number)).length, {
        timeout: 60_000,
      })
      .toBe(missing.size);
    second.kill("SIGTERM");
    expect(await second.exited).toEqual({ code: 0, signal: null });

    const after = await counts(statePath, ids);
    expect(withCount(after, 0)).toEqual([]);
    expect(withCount(after, 2)).toEqual([]);
    expect(withCount(after, 1)).toHaveLength(BURST);
  }, 120_000);
});
