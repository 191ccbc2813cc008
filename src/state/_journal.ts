/**
 * The write-ahead log: one JSON record per line, appended by each commit or flush (a flush also
 * fdatasyncs it).
 *
 * Line 1 is a header naming the snapshot generation the log continues. Then:
 *   {"op":"set","key":"<stored key>","value":<json>,"expiresAt":<ms, optional>}
 *   {"op":"del","key":"<stored key>"}
 * Records are absolute (the resolved outcome of setIfAbsent/update, never the operation), so
 * replaying a record twice is harmless. A record counts only once its "\n" is on disk: a kill in
 * the middle of an append leaves an unterminated tail, which loading drops and truncates away.
 */
import { ftruncateSync, writeSync } from "node:fs";
import { open, readFile } from "node:fs/promises";
import { writeFileAtomic } from "./_atomic-write.ts";
import type { TableEntry } from "./_table.ts";
import { StateError } from "./state-error.ts";

export interface JournalRecord {
  key: string;
  /** `undefined` for a delete. */
  entry: TableEntry | undefined;
}

export interface JournalContents {
  generation: number;
  records: JournalRecord[];
  /** Bytes up to and including the last complete line. */
  validBytes: number;
  /** Bytes of an unterminated last line (a torn append), dropped. */
  tornBytes: number;
}

const MAGIC = "bothost-state-log";

export function recordLine(key: string, entry: TableEntry | undefined): string {
  if (entry === undefined) return `{"op":"del","key":${JSON.stringify(key)}}`;
  const expiry = entry.expiresAt === undefined ? "" : `,"expiresAt":${entry.expiresAt}`;
  return `{"op":"set","key":${JSON.stringify(key)},"value":${entry.text}${expiry}}`;
}

/** Read and check a log; `undefined` when the file does not exist. */
export async function readJournal(file: string): Promise<JournalContents | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  const validBytes = bytes.lastIndexOf(0x0a) + 1;
  const lines = bytes.subarray(0, validBytes).toString("utf8").split("\n");
  lines.pop(); // the empty string after the final "\n"
  const header = lines[0] === undefined ? undefined : parseLine(lines[0]);
  if (!isHeader(header)) {
    throw corrupt(file, 1, "the header line is missing or damaged");
  }
  const records: JournalRecord[] = [];
  for (let i = 1; i < lines.length; i++) {
    const record = toRecord(parseLine(lines[i] as string));
    if (record === undefined) throw corrupt(file, i + 1, "it is not a valid record");
    records.push(record);
  }
  return { generation: header.generation, records, validBytes, tornBytes: bytes.length - validBytes };
}

/**
 * Appends records to a log at explicit offsets, so a failed append can be cut back cleanly.
 *
 * Writing and syncing are separate steps: {@link JournalWriter.write} is synchronous (a
 * positional `write(2)` into the page cache, which survives a kill of this process), so writes
 * land in exactly the order they are issued, however flushes and commits interleave; only
 * {@link JournalWriter.sync} (an fdatasync, needed against a machine crash) is asynchronous.
 */
export class JournalWriter {
  /** Bytes known to be on stable storage (fdatasync'ed, or written by an fsynced create). */
  private synced: number;
  private closed = false;

  private constructor(
    private readonly handle: Awaited<ReturnType<typeof open>>,
    private size: number,
  ) {
    this.synced = size;
  }

  /** Atomically create (or replace) the log with just a header for `generation`. */
  static async create(file: string, generation: number): Promise<JournalWriter> {
    const header = `${JSON.stringify({ format: MAGIC, version: 1, generation })}\n`;
    await writeFileAtomic(file, header);
    return new JournalWriter(await open(file, "r+"), Buffer.byteLength(header));
  }

  /** Continue an existing log after its last complete line, cutting off a torn tail. */
  static async resume(file: string, validBytes: number, tornBytes: number): Promise<JournalWriter> {
    const handle = await open(file, "r+");
    if (tornBytes > 0) {
      await handle.truncate(validBytes);
      await handle.sync();
    }
    return new JournalWriter(handle, validBytes);
  }

  get bytes(): number {
    return this.size;
  }

  /** True when some written bytes have not been fdatasync'ed yet. */
  get unsynced(): boolean {
    return this.size > this.synced;
  }

  /**
   * Write `text` after the last complete line, synchronously. On failure the partial write is cut
   * back (so the next write does not land after half a record) and the error is thrown.
   */
  write(text: string): void {
    if (this.closed) throw new Error("the log file is already closed");
    const buffer = Buffer.from(text, "utf8");
    const fd = this.handle.fd;
    try {
      let done = 0;
      while (done < buffer.length) {
        done += writeSync(fd, buffer, done, buffer.length - done, this.size + done);
      }
    } catch (err) {
      try {
        ftruncateSync(fd, this.size);
      } catch {
        // The write already failed; the next write overwrites the same offset anyway.
      }
      throw err;
    }
    this.size += buffer.length;
  }

  /** fdatasync everything written so far; does nothing when nothing is unsynced. */
  async sync(): Promise<void> {
    if (this.closed) throw new Error("the log file is already closed");
    const target = this.size; // writes landing while we wait are left for the next sync
    if (target <= this.synced) return;
    await this.handle.datasync();
    if (target > this.synced) this.synced = target;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.handle.close();
  }
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

function isHeader(value: unknown): value is { generation: number } {
  const v = value as { format?: unknown; version?: unknown; generation?: unknown } | undefined;
  return v?.format === MAGIC && v.version === 1 && Number.isSafeInteger(v.generation);
}

function toRecord(value: unknown): JournalRecord | undefined {
  const v = value as { op?: unknown; key?: unknown; value?: unknown; expiresAt?: unknown } | undefined;
  if (typeof v?.key !== "string") return undefined;
  if (v.op === "del") return { key: v.key, entry: undefined };
  if (v.op !== "set" || !("value" in v)) return undefined;
  const text = JSON.stringify(v.value);
  if (v.expiresAt === undefined) return { key: v.key, entry: { text } };
  return typeof v.expiresAt === "number"
    ? { key: v.key, entry: { text, expiresAt: v.expiresAt } }
    : undefined;
}

export function corrupt(file: string, line: number, why: string): StateError {
  return new StateError(
    "STATE_CORRUPT",
    `State file ${file} is damaged at line ${line}: ${why}. bothost only appends whole lines to it, so something else changed it. Restore the state directory from a backup, or move it aside to start with empty state (bots then lose their cursors and stored data).`,
  );
}
