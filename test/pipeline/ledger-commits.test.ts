/**
 * When a FileStore's ledger commits: the first completions of a turn of the event loop in a
 * microtask (the next message starts at once), every later completion of that turn at its end,
 * once, the conversation's next message waiting for it. Each check reopens a copy of the state
 * directory, as a restart after kill -9 would.
 */
import { cpSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/api/logger.ts";
import { DeliveryLedger } from "../../src/pipeline/delivery-ledger.ts";
import { LedgerCommits } from "../../src/pipeline/ledger-commits.ts";
import { FileStore } from "../../src/state/file-store.ts";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function fileLedger() {
  const dir = await mkdtemp(join(tmpdir(), "bothost-ledger-commits-"));
  dirs.push(dir);
  const store = await FileStore.open(join(dir, "state"), { autoFlushMs: 0 });
  let commits = 0;
  const ledger = await DeliveryLedger.open(store);
  await ledger.baseline(0);
  const commitsOf = new LedgerCommits(ledger, {
    log: silentLogger,
    commit: () => store.commit(),
    syncCommit: {
      ready: () => store.canCommitNow(),
      commit: () => {
        commits++;
        return store.commitNow();
      },
    },
  });
  /** Whether `id` is recorded as handled in what a restart would read now. */
  const durable = async (id: number) => {
    const copy = join(dir, `copy-${id}-${commits}`);
    cpSync(join(dir, "state"), copy, { recursive: true, filter: (src) => !src.endsWith("LOCK") });
    const reopened = await FileStore.open(copy, { autoFlushMs: 0 });
    const handled = (await DeliveryLedger.open(reopened)).isDuplicate(id);
    await reopened.close();
    return handled;
  };
  return { store, ledger, commits: commitsOf, count: () => commits, durable };
}

describe("LedgerCommits with a synchronous commit", () => {
  it("commits a turn's first completions in a microtask, its later ones once at its end", async () => {
    const { store, ledger, commits, count, durable } = await fileLedger();
    for (const id of [1, 2, 3, 4]) ledger.begin(id);
    // The first completion: no hold, committed before anything awaited after it resumes.
    expect(commits.finish(1)).toBeUndefined();
    await Promise.resolve();
    expect(count()).toBe(1);
    // Later completions of the same turn (async handlers settling in microtasks) share one hold.
    const second = commits.finish(2);
    expect(second).toBeInstanceOf(Promise);
    await Promise.resolve();
    expect(commits.finish(3)).toBe(second);
    expect(count()).toBe(1);
    await second;
    expect(count()).toBe(2);
    expect(await durable(3)).toBe(true);
    // A new turn starts with a microtask commit again.
    expect(commits.finish(4)).toBeUndefined();
    await Promise.resolve();
    expect(count()).toBe(3);
    expect(await durable(4)).toBe(true);
    await store.close();
  });

  it("commits a burst of completions that settle one after another once per turn", async () => {
    const { store, ledger, commits, count, durable } = await fileLedger();
    for (let id = 1; id <= 200; id++) ledger.begin(id);
    const holds = new Set<Promise<void>>();
    // Each completion in a microtask of its own, as async handlers finish one after another.
    for (let id = 1; id <= 200; id++) {
      await Promise.resolve();
      const hold = commits.finish(id);
      if (hold) holds.add(hold);
    }
    await Promise.all(holds);
    expect(holds.size).toBe(1);
    expect(count()).toBe(2);
    expect(await durable(200)).toBe(true);
    await store.close();
  });
});
