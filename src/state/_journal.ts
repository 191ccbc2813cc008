/**
 * The two files of the embedded store.
 *
 * The snapshot (`state.json`) is the whole table at one generation, replaced atomically:
 *   {"format":"bothost-state-snapshot","version":1,"generation":3,
 *    "entries":{"<stored key>":{"value":<json>,"expiresAt":<ms, optional>}, …}}
 *
 * The write-ahead log (`state.log`) has a header line naming the generation it continues, then
 * one record per line:
 *   {"op":"set","key":"<stored key>","value":<json>,"expiresAt":<ms, optional>}
 *   {"op":"del","key":"<stored key>"}
 * Records are absolute (the outcome of setIfAbsent/update, never the operation), so replaying one
 * twice is harmless. A record counts only once its "\n" is on disk: a kill in the middle of an
 * append leaves an unterminated tail, which loading drops and truncates away.
 */
import { ftruncateSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import { readIfExists, writeFileAtomic } from "./_files.ts";
import { framedRecord, framedSnapshot } from "./_framed.ts";
import type { TableEntry } from "./_view.ts";
import { StateError } from "./state-error.ts";

export interface JournalRecord {
  key: string;
  /** `undefined` for a delete. */
  entry: TableEntry | undefined;
}

const MAGIC = "bothost-state-log";
const SNAPSHOT_MAGIC = "bothost-state-snapshot";

export function recordLine(key: string, entry: TableEntry | undefined): string {
  if (entry === undefined) return `{"op":"del","key":${JSON.stringify(key)}}`;
  return `{"op":"set","key":${JSON.stringify(key)},"value":${entry.text}${expiryField(entry)}}`;
}

export function snapshotText(generation: number, entries: Iterable<[string, TableEntry]>): string {
  const parts: string[] = [];
  for (const [key, entry] of entries) {
    parts.push(`${JSON.stringify(key)}:{"value":${entry.text}${expiryField(entry)}}`);
  }
  return `{"format":"${SNAPSHOT_MAGIC}","version":1,"generation":${generation},"entries":{${parts.join(",\n")}}}\n`;
}

function expiryField(entry: TableEntry): string {
  return entry.expiresAt === undefined ? "" : `,"expiresAt":${entry.expiresAt}`;
}

/** Read and check a log; `undefined` when the file does not exist. */
export async function readJournal(file: string): Promise<
  | {
      generation: number;
      records: JournalRecord[];
      /** Bytes up to and including the last complete line. */
      validBytes: number;
      /** Bytes of an unterminated last line (a torn append), dropped. */
      tornBytes: number;
    }
  | undefined
> {
  const bytes = await readIfExists(file);
  if (bytes === undefined) return undefined;
  const validBytes = bytes.lastIndexOf(0x0a) + 1;
  let end = bytes.indexOf(0x0a);
  const header = end < 0 ? undefined : parseLine(bytes.toString("utf8", 0, end));
  if (!isHeader(header)) {
    throw corrupt(file, " at line 1", "the header line is missing or damaged");
  }
  const records: JournalRecord[] = [];
  for (let line = 2, start = end + 1; start < validBytes; line++, start = end + 1) {
    end = bytes.indexOf(0x0a, start);
    const record = framedRecord(bytes, start, end) ?? toRecord(parseLine(bytes.toString("utf8", start, end)));
    if (record === undefined) throw corrupt(file, ` at line ${line}`, "it is not a valid record");
    records.push(record);
  }
  return { generation: header.generation, records, validBytes, tornBytes: bytes.length - validBytes };
}

/** Read and check a snapshot; `undefined` when the file does not exist. */
export async function readSnapshot(
  file: string,
): Promise<{ generation: number; entries: Array<[string, TableEntry]> } | undefined> {
  const bytes = await readIfExists(file);
  if (bytes === undefined) return undefined;
  // Laid out as snapshotText writes it, it is read a value at a time; otherwise parsed whole.
  const framed = framedSnapshot(bytes);
  if (framed !== undefined) return framed;
  let parsed: { format?: unknown; version?: unknown; generation?: unknown; entries?: unknown };
  try {
    parsed = JSON.parse(bytes.toString("utf8"));
  } catch (err) {
    throw corrupt(file, "", `it is not complete JSON (${(err as Error).message})`);
  }
  if (parsed?.format !== SNAPSHOT_MAGIC || parsed.version !== 1 || !Number.isSafeInteger(parsed.generation)) {
    throw corrupt(file, "", "its header (format, version, generation) is missing or unknown");
  }
  if (typeof parsed.entries !== "object" || parsed.entries === null || Array.isArray(parsed.entries)) {
    throw corrupt(file, "", `"entries" is not an object`);
  }
  const entries: Array<[string, TableEntry]> = [];
  for (const [key, raw] of Object.entries(parsed.entries as Record<string, unknown>)) {
    const e = raw as { value?: unknown; expiresAt?: unknown } | null;
    if (typeof e !== "object" || e === null || !("value" in e))
      throw corrupt(file, "", `entry "${key}" has no value`);
    const entry: TableEntry = { text: JSON.stringify(e.value) };
    if (e.expiresAt !== undefined) {
      if (typeof e.expiresAt !== "number") throw corrupt(file, "", `entry "${key}" has a bad expiresAt`);
      entry.expiresAt = e.expiresAt;
    }
    entries.push([key, entry]);
  }
  return { generation: parsed.generation as number, entries };
}

/**
 * Appends records to a log at explicit offsets, so a failed append can be cut back cleanly.
 *
 * {@link JournalWriter.write} is synchronous (a positional `write(2)` into the page cache, which
 * survives a kill of this process), so writes land in exactly the order they are issued, however
 * flushes and commits interleave; only {@link JournalWriter.sync} (an fdatasync, needed against a
 * machine crash) is asynchronous.
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

/** `where` is "" (the snapshot, replaced atomically) or " at line N" (the log, only appended). */
function corrupt(file: string, where: string, why: string): StateError {
  const how = where === "" ? "replaces it atomically" : "only appends whole lines to it";
  return new StateError(
    "STATE_CORRUPT",
    `State file ${file} is damaged${where}: ${why}. bothost ${how}, so something else changed it. Restore the state directory from a backup, or move it aside to start with empty state (bots then lose their cursors and stored data).`,
  );
}
