/**
 * The embedded state store: data in memory, made durable in a directory.
 *
 * Why a write-ahead log plus snapshot rather than snapshots alone: the runtime flushes after every
 * handled batch (often several times a second), and rewriting the whole store each time costs
 * O(store size) per flush, which grows with dedup sets and report records. Appending the changed
 * keys costs O(changes). Flushes are coalesced: writes only touch memory, and one flush appends
 * everything buffered since the last one with a single write + fsync. Once the log outgrows
 * `compactAfterBytes`, a compaction writes a new snapshot atomically and starts a fresh log.
 *
 * Durability: after a crash (even kill -9 mid-write, or mid-compaction) the store reopens to the
 * state after some prefix of the writes, and that prefix includes every write issued before the
 * last `flush()` that resolved. Files: `state.json` (snapshot), `state.log` (log), `LOCK`.
 */
import { mkdir, readdir, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { isTempFileOf, writeFileAtomic } from "./_atomic-write.ts";
import { JournalWriter, readJournal, recordLine } from "./_journal.ts";
import { acquireLock } from "./_lock.ts";
import { readSnapshot, snapshotText } from "./_snapshot.ts";
import { Table } from "./_table.ts";
import { StoreView } from "./_view.ts";
import { isStateError, StateError } from "./state-error.ts";
import type { StateBackend } from "./state-store.ts";

export interface FileStoreOptions {
  /** The clock used for expiry, in epoch milliseconds. @default Date.now */
  now?: () => number;
  /** Write a new snapshot once the log is larger than this many bytes. @default 4 MiB */
  compactAfterBytes?: number;
  /** Also flush in the background this often, in ms (0 = only on flush()/close()). @default 1000 */
  autoFlushMs?: number;
  /** Where recoveries and failed background flushes are reported (a pino logger fits). */
  log?: { warn(obj: object, msg?: string): void };
}

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
 * directory fails with `STATE_LOCKED` (a lock left by a dead process is taken over).
 *
 * @example
 * ```ts
 * const store = await FileStore.open(".bothost/state");
 * await store.namespace("greeter").set("greeted:8", true);
 * await store.flush(); // durable from here on
 * await store.close();
 * ```
 */
export class FileStore extends StoreView implements StateBackend {
  private flushing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout | undefined;

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
    const every = options.autoFlushMs ?? 1000;
    if (every > 0) {
      this.timer = setInterval(() => {
        if (this.pending.length === 0) return;
        this.enqueueFlush().catch((err: unknown) => {
          options.log?.warn({ err, dir }, "background state flush failed; retrying on the next flush");
        });
      }, every);
      this.timer.unref();
    }
  }

  /** Open (creating if needed) the store in `dir`, replaying and repairing what is on disk. */
  static async open(dir: string, options: FileStoreOptions = {}): Promise<FileStore> {
    const root = resolve(dir);
    const release = await ioStep(root, async () => {
      await mkdir(root, { recursive: true, mode: 0o700 });
      return acquireLock(root);
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
    const table = new Table(options.now ?? Date.now, (key, entry) => pending.push(recordLine(key, entry)));
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
    return this.enqueueFlush();
  }

  async close(): Promise<void> {
    if (this.lifecycle.closed) return;
    this.lifecycle.closed = true;
    clearInterval(this.timer);
    try {
      await this.enqueueFlush();
    } finally {
      await this.writer.close().catch(() => {});
      await this.releaseLock().catch(() => {});
    }
  }

  /** Flushes run one after another; a flush with nothing buffered is free. */
  private enqueueFlush(): Promise<void> {
    const run = this.flushing.then(() => this.writePending());
    this.flushing = run.catch(() => {});
    return run;
  }

  private async writePending(): Promise<void> {
    if (this.pending.length === 0) return;
    const lines = this.pending.splice(0);
    try {
      await this.writer.append(`${lines.join("\n")}\n`);
    } catch (err) {
      this.pending.unshift(...lines); // keep them, in order, for the next flush
      throw new StateError(
        "STATE_IO",
        `Could not write ${join(this.dir, LOG)}: ${(err as Error).message}. Free disk space or fix the permissions; the unwritten changes stay in memory and the next flush retries.`,
        { cause: err },
      );
    }
    if (this.writer.bytes > (this.options.compactAfterBytes ?? 4 * 1024 * 1024)) {
      await this.compact().catch((err: unknown) => {
        // The log already holds every change, so a failed compaction loses nothing; retry later.
        this.options.log?.warn({ err, dir: this.dir }, "state compaction failed; the log keeps growing");
      });
    }
  }

  /**
   * Snapshot the table (taken synchronously, so it includes any change still buffered; those are
   * also written to the new log later, which is harmless because records are absolute), then
   * start a fresh log for the new generation. A crash between the two renames leaves a log older
   * than the snapshot, which loading discards.
   */
  private async compact(): Promise<void> {
    const generation = this.generation + 1;
    await writeFileAtomic(join(this.dir, SNAPSHOT), snapshotText(generation, this.table.scan("")));
    const writer = await JournalWriter.create(join(this.dir, LOG), generation);
    await this.writer.close().catch(() => {});
    this.writer = writer;
    this.generation = generation;
  }
}

async function ioStep<T>(dir: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (isStateError(err)) throw err;
    throw new StateError(
      "STATE_IO",
      `Could not open state directory ${dir}: ${(err as Error).message}. Check that the path is a writable directory.`,
      { cause: err },
    );
  }
}
