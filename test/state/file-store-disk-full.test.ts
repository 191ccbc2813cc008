/**
 * FileStore on a full disk, the OS refusing its writes for real (test/support/file-size-limit.ts):
 * what it says (once when the disk begins refusing, once when it takes writes again), and a
 * compaction the disk has no room for (the snapshot in place stays whole, nothing is lost, and it
 * is not tried again at every commit).
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, expect } from "vitest";
import { DISK_BACK_LINE, DISK_REFUSED_LINE, FileStore } from "../../src/state/file-store.ts";
import { fillDiskAt, limitFiles } from "../support/file-size-limit.ts";
import { test } from "../support/state.ts";

afterEach(() => limitFiles("unlimited"));

/** A log that keeps each line as `level msg`. */
function lines() {
  const said: string[] = [];
  const at = (level: string) => (_obj: object, msg?: string) => said.push(`${level} ${msg}`);
  return { said, log: { warn: at("warn"), error: at("error"), info: at("info") } };
}

test("the disk refusing the store's writes is said once, and once more when it takes them again", async ({
  dir,
}) => {
  const { said, log } = lines();
  const store = await FileStore.open(dir, { autoFlushMs: 0, log });
  await store.set("a", 1);
  await store.commit();
  fillDiskAt(join(dir, "state.log"));
  for (let i = 0; i < 5; i++) {
    await store.set(`k${i}`, i);
    await expect(store.commit()).rejects.toMatchObject({ code: "STATE_IO" });
  }
  await expect(store.flush()).rejects.toMatchObject({ code: "STATE_IO" });
  // Kept in memory meanwhile.
  expect(await store.get("k4")).toBe(4);
  expect(said).toEqual([`error ${DISK_REFUSED_LINE}`]);
  limitFiles("unlimited");
  await store.set("after", true);
  await store.commit();
  expect(said).toEqual([`error ${DISK_REFUSED_LINE}`, `info ${DISK_BACK_LINE}`]);
  await store.close();
  const again = await FileStore.open(dir, { autoFlushMs: 0 });
  expect(await again.get("a")).toBe(1);
  expect(await again.get("k4")).toBe(4);
  expect(await again.get("after")).toBe(true);
  await again.close();
});

test("a compaction the disk has no room for leaves the snapshot whole, loses nothing, and is not tried at every commit", async ({
  dir,
}) => {
  const { said, log } = lines();
  const compactAfterBytes = 2_000;
  let store = await FileStore.open(dir, { autoFlushMs: 0, compactAfterBytes, log });
  // A large table, compacted once: a snapshot of ~20 kB, a fresh log.
  for (let i = 0; i < 20; i++) await store.set(`big${i}`, "x".repeat(1_000));
  await store.flush();
  expect(await readdir(dir)).toContain("state.json");
  const snapshot = await readFile(join(dir, "state.json"), "utf8");
  // Room for the log to grow, none for another snapshot of the table.
  limitFiles(snapshot.length - 1_000);
  for (let i = 0; i < 60; i++) {
    await store.set("counter", i);
    await store.set(`pad${i % 5}`, "y".repeat(100));
    await store.commit();
  }
  await store.flush();
  // Past the threshold at each of the 60 commits: one attempt, then none before the log grew as
  // much again (a snapshot written in vain costs a whole table's write).
  const failed = said.filter((l) => l.includes("state compaction failed")).length;
  const logBytes = (await stat(join(dir, "state.log"))).size;
  expect(failed).toBeGreaterThan(0);
  expect(failed).toBeLessThanOrEqual(Math.ceil(logBytes / compactAfterBytes));
  expect(await readFile(join(dir, "state.json"), "utf8")).toBe(snapshot);
  expect((await readdir(dir)).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  limitFiles("unlimited");
  await store.close();
  store = await FileStore.open(dir, { autoFlushMs: 0, compactAfterBytes });
  expect(await store.get("counter")).toBe(59);
  expect(await store.get("big19")).toBe("x".repeat(1_000));
  expect(await store.get("pad4")).toBe("y".repeat(100));
  await store.close();
});
