/**
 * The embedded state store: data in memory, made durable in a directory (`state.json` snapshot,
 * `state.log` write-ahead log, `LOCK`).
 *
 * A log rather than snapshots alone: the runtime records every handled message, and rewriting the
 * whole store each time costs O(store size); appending the changed keys costs O(changes). Writes
 * only touch memory; `commit()` appends everything buffered with one synchronous write(2), and
 * `flush()` does the same plus one fdatasync, coalesced across concurrent flushes. Once the log
 * outgrows `compactAfterBytes`, a compaction writes a new snapshot and starts a fresh log.
 *
 * Durability: after a crash (even kill -9 mid-write or mid-compaction) the store reopens to the
 * state after some prefix of the writes: after a kill of the process, every write issued before
 * the last `commit()` or `flush()` that resolved; after a machine crash, every write before the
 * last `flush()` that resolved (the background flush, `autoFlushMs`, bounds what it can take).
 */
import { readdir, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { realClock } from "../time/clock.ts";
import { acquireLock, type HeldElsewhere, isTempFileOf, writeFileAtomic } from "./_files.ts";
import { JournalWriter, readJournal, readSnapshot, recordLine, snapshotText } from "./_journal.ts";
import { StoreView, Table } from "./_view.ts";
import { makeDirs } from "./make-dirs.ts";
import { isStateError, StateError } from "./state-error.ts";
import type { StateBackend } from "./state-store.ts";

export interface FileStoreOptions {
  /** The clock used for expiry, in epoch milliseconds. @default the real clock's `now` */
  now?: () => number;
  /** Write a new snapshot once the log is larger than this many bytes. @default 4 MiB */
  compactAfterBytes?: number;
  /** Also flush in the background this often, in ms (0 = only on flush()/close()). @default 1000 */
  autoFlushMs?: number;
  /**
   * Where recoveries, failed compactions, the disk refusing writes (once, then once more when it
   * takes them again) and a wait for a command's lock are reported (a pino logger fits; without `error`/`info`, `warn` says it).
   */
  log?: StoreLog;
  /** Whether a LOCK naming this process's pid, left by no earlier process of it, is held elsewhere. */
  heldElsewhere?: HeldElsewhere;
  /**
   * The name of the short-lived command opening the store (`bothost dialogs`), said in its lock:
   * another process meeting that lock waits a few seconds for it rather than refusing at once.
   * Unset: the store is a daemon's, whose lock is refused at once. @default undefined
   */
  command?: string;
  /** How long a lock held by a command is waited for before `STATE_LOCKED`, in ms. @default 5000 */
  commandWaitMs?: number;
}

/** The logger FileStore reports to. */
export interface StoreLog {
  warn(obj: object, msg?: string): void;
  error?(obj: object, msg?: string): void;
  info?(obj: object, msg?: string): void;
}

/** Logged (error) when the disk first refuses a write of the store's. */
export const DISK_REFUSED_LINE =
  "the state store cannot write to its disk: its changes are kept in memory and written once it can";
/** Logged (info) when the disk takes the store's writes again. */
export const DISK_BACK_LINE =
  "the state store writes to its disk again: every change kept in memory is written";

/** What loading had to repair; all zero/false after a clean shutdown. */
export interface RecoveryReport {
  /** Log records replayed on top of the snapshot. */
  replayedRecords: number;
  /** Bytes of a torn (unterminated) last log line that were dropped. */
  droppedTornBytes: number;
  /** The log predates the snapshot (a crash during compaction) and was discarded. */
  discardedStaleLog: boolean;
}

const SNAPSHOT = "state.json";
const LOG = "state.log";

/**
 * A durable {@link StateBackend} in a directory. One process at a time: a second open of the same
 * directory fails with `STATE_LOCKED` (a lock left by a dead process is taken over); one held by a
 * command (`options.command`) is waited for, a few seconds at most.
 */
export class FileStore extends StoreView implements StateBackend {
  private flushing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout | undefined;
  /** True from the moment compact() takes its snapshot until the fresh log is in place. */
  private compacting = false;
  /**
   * `ok`: `writer` is the live log. `needs-log`: a compaction put a new snapshot in place but not
   * yet its fresh log, so the old log would be discarded on load. `needs-snapshot`: a failed
   * compaction may or may not have put its snapshot in place. Nothing is written until repaired.
   */
  private logState: "ok" | "needs-log" | "needs-snapshot" = "ok";
  private compactQueued = false;
  /** Flushes, compactions and waiting commits queued or running (see enqueue). */
  private queued = 0;
  private readonly compactAfterBytes: number;
  /** No compaction before the log is this large: one that failed waits for the log to grow as much again. */
  private compactAt: number;
  /** When the disk began refusing the store's writes (by `now`); undefined while it takes them. */
  private refusedSince: number | undefined;

  private constructor(
    table: Table,
    private readonly pending: string[],
    private writer: JournalWriter,
    private generation: number,
    readonly dir: string,
    readonly recovery: RecoveryReport,
    private readonly options: FileStoreOptions,
    private readonly releaseLock: () => Promise<void>,
  ) {
    super(table, "", { closed: false, description: dir });
    this.compactAfterBytes = options.compactAfterBytes ?? 4 * 1024 * 1024;
    this.compactAt = this.compactAfterBytes;
    const every = options.autoFlushMs ?? 1000;
    if (every > 0) {
      this.timer = setInterval(() => {
        if (this.pending.length === 0 && !this.writer.unsynced && this.logState === "ok") return;
        // A refusal of the disk is reported by refused(), once; the next flush retries.
        this.enqueue(() => this.writeOut(true)).catch(() => {});
      }, every);
      this.timer.unref();
    }
  }

  /** Open (creating if needed) the store in `dir`, replaying and repairing what is on disk. */
  static async open(dir: string, options: FileStoreOptions = {}): Promise<FileStore> {
    const root = resolve(dir);
    const release = await ioStep(root, async () => {
      await makeDirs(root, 0o700);
      return acquireLock(root, options.heldElsewhere, options.command, options.commandWaitMs, options.log);
    });
    try {
      return await ioStep(root, () => FileStore.load(root, options, release));
    } catch (err) {
      await release().catch(() => {});
      throw err;
    }
  }

  private static async load(
    root: string,
    options: FileStoreOptions,
    release: () => Promise<void>,
  ): Promise<FileStore> {
    for (const name of await readdir(root)) {
      if (isTempFileOf(name, SNAPSHOT) || isTempFileOf(name, LOG))
        await rm(join(root, name), { force: true });
    }
    const pending: string[] = [];
    const table = new Table(options.now ?? realClock.now, (key, entry) =>
      pending.push(recordLine(key, entry)),
    );
    const recovery: RecoveryReport = { replayedRecords: 0, droppedTornBytes: 0, discardedStaleLog: false };
    const snapshotPath = join(root, SNAPSHOT);
    const logPath = join(root, LOG);

    const snapshot = await readSnapshot(snapshotPath);
    for (const [key, entry] of snapshot?.entries ?? []) table.load(key, entry);
    const generation = snapshot?.generation ?? 0;

    const journal = await readJournal(logPath);
    let writer: JournalWriter;
    if (journal === undefined || journal.generation < generation) {
      // No log yet, or a crash landed between writing a snapshot and starting its fresh log.
      recovery.discardedStaleLog = journal !== undefined;
      writer = await JournalWriter.create(logPath, generation);
    } else if (journal.generation > generation) {
      throw new StateError(
        "STATE_CORRUPT",
        `State file ${logPath} continues snapshot generation ${journal.generation}, but ${snapshotPath} ${snapshot ? `is generation ${generation}` : "is missing"}. The snapshot was replaced or deleted by something else; restore the state directory from a backup, or move it aside to start with empty state.`,
      );
    } else {
      for (const record of journal.records) table.load(record.key, record.entry);
      recovery.replayedRecords = journal.records.length;
      recovery.droppedTornBytes = journal.tornBytes;
      writer = await JournalWriter.resume(logPath, journal.validBytes, journal.tornBytes);
    }
    if (recovery.droppedTornBytes > 0 || recovery.discardedStaleLog) {
      options.log?.warn({ dir: root, ...recovery }, "state store recovered from an interrupted write");
    }
    return new FileStore(table, pending, writer, generation, root, recovery, options, release);
  }

  async flush(): Promise<void> {
    this.checkOpen();
    return this.enqueue(() => this.writeOut(true));
  }

  /**
   * Hand every buffered change to the OS (no fdatasync). While a compaction runs the old log must
   * not grow (it is discarded once the new snapshot is in), so the write waits for the fresh log.
   */
  async commit(): Promise<void> {
    this.checkOpen();
    if (this.compacting || this.logState !== "ok") return this.enqueue(() => this.writeOut(false));
    this.writeBuffered();
    if (this.writer.bytes > this.compactAt) this.compactSoon();
  }

  /** {@link commit} done synchronously; false, writing nothing, while a compaction is queued, running or being repaired. */
  commitNow(): boolean {
    this.checkOpen();
    if (!this.canCommitNow()) return false;
    this.writeBuffered();
    if (this.writer.bytes > this.compactAt) this.compactSoon();
    return true;
  }

  /**
   * Nothing is queued that could start a compaction first: a compaction starts only inside a
   * queued task, and a task queued from now on runs after a microtask queued now.
   */
  canCommitNow(): boolean {
    return !this.lifecycle.closed && this.queued === 0 && !this.compacting && this.logState === "ok";
  }

  async close(): Promise<void> {
    if (this.lifecycle.closed) return;
    this.lifecycle.closed = true;
    clearInterval(this.timer);
    try {
      await this.enqueue(() => this.writeOut(true));
    } finally {
      await this.writer.close().catch(() => {});
      await this.releaseLock().catch(() => {});
    }
  }

  /** Flushes, compactions and waiting commits run one after another (so flushes coalesce). */
  private enqueue(task: () => Promise<void>): Promise<void> {
    this.queued++;
    const run = this.flushing.then(task).finally(() => {
      this.queued--;
    });
    this.flushing = run.catch(() => {});
    return run;
  }

  private async writeOut(sync: boolean): Promise<void> {
    await this.repairLog();
    const wrote = this.writeBuffered();
    let synced = false;
    if (sync && this.writer.unsynced) {
      try {
        await this.writer.sync();
      } catch (err) {
        throw this.refused(
          ioError(
            `sync ${join(this.dir, LOG)} to disk`,
            err,
            "Check the disk; the changes are written but not known to be on disk, and the next flush retries.",
          ),
        );
      }
      this.accepted();
      synced = true;
    }
    if (wrote || synced) await this.compactIfLarge();
  }

  /** One synchronous write of every buffered line; on failure they stay buffered, in order. */
  private writeBuffered(): boolean {
    if (this.pending.length === 0) return false;
    try {
      this.writer.write(`${this.pending.join("\n")}\n`);
    } catch (err) {
      throw this.refused(ioError(`write ${join(this.dir, LOG)}`, err, RETRY_ADVICE));
    }
    this.pending.length = 0;
    this.accepted();
    return true;
  }

  /** `err`, the disk's refusal of a write: said once, when it begins refusing. */
  private refused(err: StateError): StateError {
    if (this.refusedSince === undefined) {
      this.refusedSince = this.table.now();
      const log = this.options.log;
      (log?.error ?? log?.warn)?.call(log, { err, dir: this.dir }, DISK_REFUSED_LINE);
    }
    return err;
  }

  /** A write landed: said once, when the disk had refused the ones before it. */
  private accepted(): void {
    if (this.refusedSince === undefined) return;
    const refusedForMs = this.table.now() - this.refusedSince;
    this.refusedSince = undefined;
    const log = this.options.log;
    (log?.info ?? log?.warn)?.call(log, { dir: this.dir, refusedForMs }, DISK_BACK_LINE);
  }

  /** A commit must not wait for a compaction. */
  private compactSoon(): void {
    if (this.compactQueued) return;
    this.compactQueued = true;
    void this.enqueue(async () => {
      this.compactQueued = false;
      await this.compactIfLarge();
    });
  }

  private async compactIfLarge(): Promise<void> {
    if (this.logState !== "ok" || this.writer.bytes <= this.compactAt) return;
    await this.compact().then(
      () => {
        this.compactAt = this.compactAfterBytes;
      },
      (err: unknown) => {
        // Either the log still holds every change, or writes wait until repairLog() succeeds. Not
        // tried again at each commit (a snapshot the disk has no room for costs a whole write).
        this.compactAt = this.writer.bytes + this.compactAfterBytes;
        this.options.log?.warn({ err, dir: this.dir }, "state compaction failed; the log keeps growing");
      },
    );
  }

  private async repairLog(): Promise<void> {
    if (this.logState === "ok") return;
    try {
      if (this.logState === "needs-snapshot") await this.compact();
      else await this.startLog();
    } catch (err) {
      throw this.refused(
        ioError(`start a fresh ${join(this.dir, LOG)} after a compaction`, err, RETRY_ADVICE),
      );
    }
  }

  /**
   * Snapshot the table (synchronously, so it has every change so far, buffered or not), then start
   * a fresh log. A crash before the snapshot's rename leaves the old snapshot and log; one between
   * the two renames leaves a log older than the snapshot, which loading discards. Commits wait
   * meanwhile (`compacting`), so the old log never grows past the snapshot. The changes buffered
   * when it was taken are not logged again: a torn write could then replay older values over newer.
   */
  private async compact(): Promise<void> {
    const generation = this.generation + 1;
    const covered = this.pending.length;
    const text = snapshotText(generation, this.table.scan(""));
    this.compacting = true;
    try {
      await this.replaceSnapshot(generation, text);
      this.generation = generation;
      this.pending.splice(0, covered);
      this.logState = "needs-log"; // the old log is now stale: never append to it again
      await this.startLog();
    } finally {
      this.compacting = false;
    }
  }

  private async replaceSnapshot(generation: number, text: string): Promise<void> {
    const file = join(this.dir, SNAPSHOT);
    try {
      await writeFileAtomic(file, text);
    } catch (err) {
      // It may have failed after its rename (syncing the directory): find out which snapshot is in.
      const onDisk = await readSnapshot(file).then(
        (snapshot) => snapshot?.generation ?? 0,
        () => undefined,
      );
      if (onDisk === generation) return;
      // The old snapshot is in: the old log is still live. Anything else: compact again first.
      this.logState = onDisk === this.generation ? "ok" : "needs-snapshot";
      throw err;
    }
  }

  private async startLog(): Promise<void> {
    const writer = await JournalWriter.create(join(this.dir, LOG), this.generation);
    const old = this.writer;
    this.writer = writer;
    this.logState = "ok";
    await old.close().catch(() => {});
  }
}

async function ioStep<T>(dir: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (isStateError(err)) throw err;
    throw ioError(`open state directory ${dir}`, err, "Check that the path is a writable directory.");
  }
}

const RETRY_ADVICE =
  "Free disk space or fix the permissions; the unwritten changes stay in memory and the next commit or flush retries.";

function ioError(what: string, err: unknown, advice: string): StateError {
  return new StateError("STATE_IO", `Could not ${what}: ${(err as Error).message}. ${advice}`, {
    cause: err,
  });
}
