import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { appendFile, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Worker } from "node:worker_threads";
import { describe, expect, vi } from "vitest";
import { FileStore } from "../../src/state/file-store.ts";
import { bootId, pidNamespace, startTicks } from "../../src/state/proc-identity.ts";
import { test } from "../support/state.ts";

const open = (dir: string, compactAfterBytes?: number) =>
  FileStore.open(
    dir,
    compactAfterBytes === undefined ? { autoFlushMs: 0 } : { autoFlushMs: 0, compactAfterBytes },
  );

describe("FileStore persistence", () => {
  test("keeps sets, deletes and expiries across reopen", async ({ dir }) => {
    let now = 1000;
    const first = await FileStore.open(dir, { autoFlushMs: 0, now: () => now });
    const bot = first.namespace("greeter");
    await bot.set("a", { n: 1 });
    await bot.set("b", "gone soon");
    await bot.delete("b");
    await bot.set("ttl", 1, { ttlMs: 100 });
    await first.set("root", [1, 2]);
    await first.close();

    const second = await FileStore.open(dir, { autoFlushMs: 0, now: () => now });
    expect(second.recovery).toEqual({ replayedRecords: 5, droppedTornBytes: 0, discardedStaleLog: false });
    expect(await second.namespace("greeter").list()).toEqual([
      { key: "a", value: { n: 1 } },
      { key: "ttl", value: 1 },
    ]);
    expect(await second.get("root")).toEqual([1, 2]);
    await second.close();

    now = 1100;
    const third = await FileStore.open(dir, { autoFlushMs: 0, now: () => now });
    expect(await third.namespace("greeter").get("ttl")).toBeUndefined();
    await third.close();
  });

  test("flush makes writes durable in the log before close", async ({ dir }) => {
    const store = await open(dir);
    await store.set("k", "v");
    expect(await readFile(join(dir, "state.log"), "utf8")).not.toContain('"k"');
    await store.flush();
    const lines = (await readFile(join(dir, "state.log"), "utf8")).trim().split("\n");
    expect(lines).toEqual([
      '{"format":"bothost-state-log","version":1,"generation":0}',
      '{"op":"set","key":"k","value":"v"}',
    ]);
    await store.close();
  });

  test("flushes in the background when autoFlushMs is set", async ({ dir }) => {
    const store = await FileStore.open(dir, { autoFlushMs: 10 });
    await store.set("k", "v");
    await expect.poll(() => readFile(join(dir, "state.log"), "utf8")).toContain('"key":"k"');
    await store.close();
  });

  test("compacts into a snapshot once the log is large, and reloads it", async ({ dir }) => {
    const store = await open(dir, 2_000);
    for (let i = 0; i < 100; i++) {
      await store.set(`k${i % 10}`, { i, pad: "x".repeat(50) });
      if (i % 10 === 9) await store.flush();
    }
    await store.delete("k0");
    await store.close();
    expect((await stat(join(dir, "state.log"))).size).toBeLessThan(2_000);
    const snapshot = JSON.parse(await readFile(join(dir, "state.json"), "utf8"));
    expect(snapshot.generation).toBeGreaterThan(1);

    const again = await open(dir);
    const all = await again.list();
    expect(all.map((e) => e.key)).toEqual(["k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9"]);
    expect(all[8]?.value).toEqual({ i: 99, pad: "x".repeat(50) });
    await again.close();
  });
});

describe("FileStore commit", () => {
  const logPath = (dir: string) => join(dir, "state.log");

  test("writes the buffered changes to the log at once, and they reload", async ({ dir }) => {
    const store = await open(dir);
    await store.set("k", "v");
    await store.namespace("bot").delete("nothing"); // no change, no record
    await store.set("gone", 1);
    await store.delete("gone");
    expect(await readFile(logPath(dir), "utf8")).not.toContain('"k"');
    await store.commit();
    expect((await readFile(logPath(dir), "utf8")).split("\n")).toEqual([
      '{"format":"bothost-state-log","version":1,"generation":0}',
      '{"op":"set","key":"k","value":"v"}',
      '{"op":"set","key":"gone","value":1}',
      '{"op":"del","key":"gone"}',
      "",
    ]);
    await store.flush(); // nothing buffered, but the committed bytes still get synced
    await store.close();
    const again = await open(dir);
    expect(again.recovery).toEqual({ replayedRecords: 3, droppedTornBytes: 0, discardedStaleLog: false });
    expect(await again.list()).toEqual([{ key: "k", value: "v" }]);
    await again.close();
  });

  test("with nothing buffered, writes nothing", async ({ dir }) => {
    const store = await open(dir);
    await store.set("a", 1);
    await store.commit();
    // Bytes after the store's end of log: any write at its tracked offset would overwrite them.
    await appendFile(logPath(dir), "junk!");
    const before = await readFile(logPath(dir), "utf8");
    expect(before.endsWith('{"op":"set","key":"a","value":1}\njunk!')).toBe(true);
    await store.commit();
    await store.commit();
    await store.flush();
    expect(await readFile(logPath(dir), "utf8")).toBe(before);
    await store.close();
    expect(await readFile(logPath(dir), "utf8")).toBe(before);
    const again = await open(dir);
    expect(again.recovery).toEqual({ replayedRecords: 1, droppedTornBytes: 5, discardedStaleLog: false });
    await again.close();
  });

  test("waits for a running compaction and writes into the fresh log, not the old one", async ({ dir }) => {
    const store = await open(dir, 1024);
    for (let i = 0; i < 20; i++) await store.set(`filler${i}`, "x".repeat(100));
    await store.commit(); // over 1024 bytes: a compaction starts right after
    await store.set("late", "after the snapshot");
    const committing = store.commit();
    expect(readFileSync(logPath(dir), "utf8")).not.toContain('"late"'); // the old log did not grow
    await committing;
    const snapshot = JSON.parse(await readFile(join(dir, "state.json"), "utf8"));
    expect(snapshot.generation).toBe(1);
    expect(snapshot.entries).not.toHaveProperty("late");
    expect(await readFile(logPath(dir), "utf8")).toBe(
      '{"format":"bothost-state-log","version":1,"generation":1}\n{"op":"set","key":"late","value":"after the snapshot"}\n',
    );
    await store.close();
    const again = await open(dir);
    expect(await again.get("late")).toBe("after the snapshot");
    expect(await again.get("filler0")).toBe("x".repeat(100));
    await again.close();
  });

  test("compacts once commits alone grow the log past compactAfterBytes", async ({ dir }) => {
    const store = await open(dir, 1024);
    for (let i = 0; i < 20; i++) {
      await store.set(`k${i}`, "x".repeat(100));
      await store.commit();
    }
    await expect
      .poll(
        async () => JSON.parse(await readFile(join(dir, "state.json"), "utf8").catch(() => "{}")).generation,
      )
      .toBeGreaterThanOrEqual(1);
    await store.close();
    const again = await open(dir);
    expect(await again.list()).toHaveLength(20);
    await again.close();
  });
});

describe("FileStore commitNow", () => {
  const logPath = (dir: string) => join(dir, "state.log");

  test("writes what is buffered before it returns", async ({ dir }) => {
    const store = await open(dir);
    void store.set("k", "v"); // applied at the call: the promise only reports
    expect(store.canCommitNow()).toBe(true);
    expect(store.commitNow()).toBe(true);
    expect(readFileSync(logPath(dir), "utf8")).toContain('{"op":"set","key":"k","value":"v"}');
    await store.close();
    const again = await open(dir);
    expect(await again.get("k")).toBe("v");
    await again.close();
  });

  test("refuses, writing nothing, while a compaction is queued or running", async ({ dir }) => {
    const store = await open(dir, 1024);
    for (let i = 0; i < 20; i++) await store.set(`filler${i}`, "x".repeat(100));
    expect(store.commitNow()).toBe(true); // over 1024 bytes: a compaction is queued
    expect(store.canCommitNow()).toBe(false);
    await store.set("late", 1);
    const before = readFileSync(logPath(dir), "utf8");
    expect(store.commitNow()).toBe(false);
    expect(readFileSync(logPath(dir), "utf8")).toBe(before);
    await store.commit(); // waits for the compaction (whose snapshot took "late")
    expect(store.canCommitNow()).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, "state.json"), "utf8")).generation).toBe(1);
    await store.close();
    const again = await open(dir);
    expect(await again.get("late")).toBe(1);
    await again.close();
  });

  test("refuses while a flush is queued, and after close", async ({ dir }) => {
    const store = await open(dir);
    await store.set("a", 1);
    const flushing = store.flush();
    expect(store.canCommitNow()).toBe(false);
    expect(store.commitNow()).toBe(false);
    await flushing;
    expect(store.canCommitNow()).toBe(true);
    await store.close();
    expect(store.canCommitNow()).toBe(false);
    expect(() => store.commitNow()).toThrow(/closed/);
  });
});

describe("FileStore recovery", () => {
  test("drops a torn last log line, truncates it away and keeps going", async ({ dir }) => {
    const store = await open(dir);
    await store.set("a", 1);
    await store.close();
    const logPath = join(dir, "state.log");
    const before = (await stat(logPath)).size;
    await appendFile(logPath, '{"op":"set","key":"b","val');

    const reopened = await open(dir);
    expect(reopened.recovery).toEqual({ replayedRecords: 1, droppedTornBytes: 26, discardedStaleLog: false });
    expect((await stat(logPath)).size).toBe(before);
    expect(await reopened.get("b")).toBeUndefined();
    await reopened.set("c", 3);
    await reopened.close();

    const third = await open(dir);
    expect(await third.list()).toEqual([
      { key: "a", value: 1 },
      { key: "c", value: 3 },
    ]);
    await third.close();
  });

  test("refuses a log damaged before its last line, naming file and line", async ({ dir }) => {
    const logPath = join(dir, "state.log");
    await writeFile(
      logPath,
      '{"format":"bothost-state-log","version":1,"generation":0}\n{"op":"set","key":"a","value":1}\n{"op":"sex"}\n{"op":"del","key":"a"}\n',
    );
    await expect(open(dir)).rejects.toMatchObject({
      name: "StateError",
      code: "STATE_CORRUPT",
      message: `State file ${logPath} is damaged at line 3: it is not a valid record. bothost only appends whole lines to it, so something else changed it. Restore the state directory from a backup, or move it aside to start with empty state (bots then lose their cursors and stored data).`,
    });
    // The failed open released its lock: after repairing the file, opening works.
    await writeFile(logPath, '{"format":"bothost-state-log","version":1,"generation":0}\n');
    await (await open(dir)).close();
  });

  test("refuses a truncated snapshot, naming the file", async ({ dir }) => {
    const snapshotPath = join(dir, "state.json");
    await writeFile(
      snapshotPath,
      '{"format":"bothost-state-snapshot","version":1,"generation":2,"entries":{"a":{"va',
    );
    const err = await open(dir).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "STATE_CORRUPT" });
    expect((err as Error).message).toMatch(
      new RegExp(
        `^State file ${snapshotPath.replaceAll("/", "\\/")} is damaged: it is not complete JSON \\(`,
      ),
    );
  });

  test("discards a log older than the snapshot (crash during compaction)", async ({ dir }) => {
    await writeFile(
      join(dir, "state.json"),
      '{"format":"bothost-state-snapshot","version":1,"generation":1,"entries":{"a":{"value":2}}}\n',
    );
    await writeFile(
      join(dir, "state.log"),
      '{"format":"bothost-state-log","version":1,"generation":0}\n{"op":"set","key":"a","value":1}\n',
    );
    const store = await open(dir);
    expect(store.recovery.discardedStaleLog).toBe(true);
    expect(await store.get("a")).toBe(2);
    await store.close();
    expect(await readFile(join(dir, "state.log"), "utf8")).toBe(
      '{"format":"bothost-state-log","version":1,"generation":1}\n',
    );
  });

  test("refuses a log newer than the snapshot", async ({ dir }) => {
    await writeFile(join(dir, "state.log"), '{"format":"bothost-state-log","version":1,"generation":3}\n');
    await expect(open(dir)).rejects.toMatchObject({
      code: "STATE_CORRUPT",
      message: `State file ${join(dir, "state.log")} continues snapshot generation 3, but ${join(dir, "state.json")} is missing. The snapshot was replaced or deleted by something else; restore the state directory from a backup, or move it aside to start with empty state.`,
    });
  });

  test("removes temp files left by an interrupted atomic write", async ({ dir }) => {
    await writeFile(join(dir, ".state.json.123.abcd.tmp"), "half a snap");
    await (await open(dir)).close();
    expect((await readdir(dir)).sort()).toEqual(["state.log"]);
  });

  test("reports an unusable directory as STATE_IO", async ({ dir }) => {
    const file = join(dir, "not-a-dir");
    await writeFile(file, "");
    const err = await FileStore.open(file).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "StateError", code: "STATE_IO" });
    expect((err as Error).message).toMatch(
      new RegExp(
        `^Could not open state directory ${file}: .*EEXIST.*\\. Check that the path is a writable directory\\.$`,
      ),
    );
  });

  // Node's recursive mkdir loops forever there (the parent exists, the child is refused with ENOENT).
  test.skipIf(!existsSync("/proc/self"))(
    "a directory the file system cannot make (under /proc) fails with STATE_IO",
    async () => {
      const err = await FileStore.open("/proc/bothost-state-test/nested").catch((e: unknown) => e);
      expect(err).toMatchObject({ name: "StateError", code: "STATE_IO" });
      expect((err as Error).message).toMatch(
        /^Could not open state directory \/proc\/bothost-state-test\/nested: .*ENOENT/,
      );
    },
  );
});

describe("FileStore lock", () => {
  test("a second open of the same directory fails until the first closes", async ({ dir }) => {
    const first = await open(dir);
    const err = await open(dir).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "StateError", code: "STATE_LOCKED" });
    expect((err as Error).message).toMatch(
      new RegExp(
        `^State directory ${dir} is in use by this process \\(since .+\\)\\. Stop that daemon or give this one a different state\\.path\\. If that process is not a bothost daemon, delete ${dir}/LOCK\\.$`,
      ),
    );
    await first.close();
    await (await open(dir)).close();
  });

  // A worker thread has a global object of its own, so the nonces of the locks its copy of the
  // module took: the LOCK's start ticks (in this boot and pid namespace) say it is this process.
  test.skipIf(process.platform !== "linux")(
    "an open from another thread of this process fails while this one holds the directory",
    async ({ dir }) => {
      const first = await open(dir);
      const code = `import { parentPort, workerData } from "node:worker_threads";
const loaded = await import(workerData.module);
const { FileStore } = loaded.FileStore ? loaded : loaded.default;
try { await (await FileStore.open(workerData.dir)).close(); parentPort.postMessage("opened"); }
catch (err) { parentPort.postMessage(String(err.code ?? err)); }`;
      const module = new URL("../../src/state/file-store.ts", import.meta.url).href;
      const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(code)}`), {
        workerData: { module, dir },
        execArgv: ["--import", "jiti/register"],
      });
      // Left to end on its own once its module has run: terminating a worker while its module's
      // top-level await settles can abort the whole process in V8 (seen on Node 22.12: "Check
      // failed: (location_) != nullptr" in AsyncModuleExecutionFulfilled, nodejs/node#53238).
      const exited = once(worker, "exit");
      const [said] = (await once(worker, "message")) as [string];
      await exited;
      expect(said).toBe("STATE_LOCKED");
      expect(JSON.parse(await readFile(join(dir, "LOCK"), "utf8")).pid).toBe(process.pid);
      await first.close();
      expect(await readdir(dir)).not.toContain("LOCK");
    },
  );

  test("takes over a lock left by a dead process", async ({ dir }) => {
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
    const pid = Number(dead.stdout.toString());
    await writeFile(join(dir, "LOCK"), JSON.stringify({ pid, hostname: hostname(), startedAt: "then" }));
    const store = await open(dir);
    const lock = JSON.parse(await readFile(join(dir, "LOCK"), "utf8"));
    expect(lock.pid).toBe(process.pid);
    await store.close();
    expect(await readdir(dir)).not.toContain("LOCK");
  });

  // A process killed but not yet reaped by its parent (a zombie) still answers kill(pid, 0).
  test.skipIf(process.platform !== "linux")("takes over a lock left by a zombie process", async ({ dir }) => {
    // sh starts a child, prints its pid and becomes `sleep`, which never waits for that child.
    const parent = spawn("sh", ["-c", "sleep 300 & echo $!; exec sleep 300"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const [line] = (await once(createInterface({ input: parent.stdout }), "line")) as [string];
      const pid = Number(line);
      await vi.waitFor(
        async () => expect(await readFile(`/proc/${parent.pid}/cmdline`, "utf8")).toMatch(/^sleep\0/),
        { timeout: 10_000, interval: 10 },
      );
      process.kill(pid, "SIGKILL");
      await vi.waitFor(
        async () => expect(await readFile(`/proc/${pid}/stat`, "utf8")).toMatch(/^\d+ \(.*\) Z /),
        { timeout: 10_000, interval: 10 },
      );
      expect(() => process.kill(pid, 0)).not.toThrow();

      await writeFile(join(dir, "LOCK"), JSON.stringify({ pid, hostname: hostname(), startedAt: "then" }));
      const store = await open(dir);
      expect(JSON.parse(await readFile(join(dir, "LOCK"), "utf8")).pid).toBe(process.pid);
      await store.close();
    } finally {
      parent.kill("SIGKILL");
    }
  });

  // The LOCK holds its taker's start ticks, pid namespace and boot (proc-identity.ts).
  test.skipIf(process.platform !== "linux")(
    "takes over a lock whose pid a later process got: this very process (started at boot as before a reboot, a restarted container's PID 1), or another live one",
    async ({ dir }) => {
      const lockPath = join(dir, "LOCK");
      const [pidns, boot] = [await pidNamespace(), await bootId()];
      const lock = (pid: number, ticks: number, more: object = {}) =>
        writeFile(
          lockPath,
          JSON.stringify({ pid, hostname: hostname(), startedAt: "then", ticks, pidns, boot, ...more }),
        );
      const mine = (await startTicks(process.pid))!;
      // Taken before a reboot by a daemon of this pid, whatever its tick.
      await lock(process.pid, mine, { boot: "an-earlier-boot" });
      await (await open(dir)).close();
      await lock(process.pid, mine - 1);
      await (await open(dir)).close();
      // This pid in another pid namespace: a container's PID 1 before its restart, not this process.
      await lock(process.pid, mine - 1, { pidns: "pid:[1]" });
      await (await open(dir)).close();
      // Written before the LOCK held the boot, by a service of this pid and tick before a reboot.
      await lock(process.pid, mine, { boot: undefined });
      await (await open(dir)).close();
      const parent = (await startTicks(process.ppid))!;
      await lock(process.ppid, parent + 1);
      await (await open(dir)).close();
      // Its taker still running, or in another pid namespace (its pid cannot be checked here): held.
      await lock(process.ppid, parent);
      await expect(open(dir)).rejects.toMatchObject({ code: "STATE_LOCKED" });
      await lock(process.ppid, parent - 1, { pidns: "pid:[1]" });
      await expect(open(dir)).rejects.toMatchObject({ code: "STATE_LOCKED" });
    },
  );

  test("respects a lock held by a live process or another host", async ({ dir }) => {
    const lockPath = join(dir, "LOCK");
    await writeFile(lockPath, JSON.stringify({ pid: process.ppid, hostname: hostname(), startedAt: "t0" }));
    await expect(open(dir)).rejects.toMatchObject({
      code: "STATE_LOCKED",
      message: `State directory ${dir} is in use by pid ${process.ppid} on ${hostname()} (since t0). Stop that daemon or give this one a different state.path. If that process is not a bothost daemon, delete ${lockPath}.`,
    });
    await writeFile(lockPath, JSON.stringify({ pid: 999_999_999, hostname: "elsewhere", startedAt: "t0" }));
    await expect(open(dir)).rejects.toMatchObject({ code: "STATE_LOCKED" });
    await writeFile(lockPath, "garbage");
    await expect(open(dir)).rejects.toMatchObject({
      code: "STATE_LOCKED",
      message: `State directory ${dir} has a LOCK file bothost cannot read. If no bothost daemon uses this directory, delete ${lockPath}.`,
    });
  });

  // A short-lived command (bothost dialogs with no daemon answering) is waited for, a daemon not.
  test("a lock held by a live command is waited for, then refused naming the command", async ({ dir }) => {
    const lockPath = join(dir, "LOCK");
    const held = { pid: process.ppid, hostname: hostname(), startedAt: "t0", command: "bothost dialogs" };
    await writeFile(lockPath, JSON.stringify(held));
    const daemon = await FileStore.open(dir, { autoFlushMs: 0, commandWaitMs: 30 }).catch((e: unknown) => e);
    expect(daemon).toMatchObject({
      code: "STATE_LOCKED",
      heldBy: "command",
      message: `State directory ${dir} is in use by the command bothost dialogs (pid ${process.ppid} on ${hostname()}, since t0), which did not end within 0.03 s. Try again once it has ended. If that process is not a bothost command, delete ${lockPath}.`,
    });
    // A daemon's lock: refused without waiting, whatever the wait allowed.
    await writeFile(lockPath, JSON.stringify({ ...held, command: undefined }));
    await expect(
      FileStore.open(dir, { autoFlushMs: 0, command: "bothost failed", commandWaitMs: 60_000 }),
    ).rejects.toMatchObject({ code: "STATE_LOCKED", heldBy: "daemon" });
  });
});
