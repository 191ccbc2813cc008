/**
 * The snapshot: the whole table at one generation, replaced atomically by compaction.
 *
 *   {"format":"bothost-state-snapshot","version":1,"generation":3,
 *    "entries":{"<stored key>":{"value":<json>,"expiresAt":<ms, optional>}, …}}
 */
import { readFile } from "node:fs/promises";
import type { TableEntry } from "./_table.ts";
import { StateError } from "./state-error.ts";

const MAGIC = "bothost-state-snapshot";

export interface SnapshotContents {
  generation: number;
  entries: Array<[string, TableEntry]>;
}

export function snapshotText(generation: number, entries: Iterable<[string, TableEntry]>): string {
  const parts: string[] = [];
  for (const [key, entry] of entries) {
    const expiry = entry.expiresAt === undefined ? "" : `,"expiresAt":${entry.expiresAt}`;
    parts.push(`${JSON.stringify(key)}:{"value":${entry.text}${expiry}}`);
  }
  return `{"format":"${MAGIC}","version":1,"generation":${generation},"entries":{${parts.join(",\n")}}}\n`;
}

/** Read and check a snapshot; `undefined` when the file does not exist. */
export async function readSnapshot(file: string): Promise<SnapshotContents | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  let parsed: { format?: unknown; version?: unknown; generation?: unknown; entries?: unknown };
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw damaged(file, `it is not complete JSON (${(err as Error).message})`);
  }
  if (parsed?.format !== MAGIC || parsed.version !== 1 || !Number.isSafeInteger(parsed.generation)) {
    throw damaged(file, "its header (format, version, generation) is missing or unknown");
  }
  if (typeof parsed.entries !== "object" || parsed.entries === null || Array.isArray(parsed.entries)) {
    throw damaged(file, `"entries" is not an object`);
  }
  const entries: Array<[string, TableEntry]> = [];
  for (const [key, raw] of Object.entries(parsed.entries as Record<string, unknown>)) {
    const e = raw as { value?: unknown; expiresAt?: unknown } | null;
    if (typeof e !== "object" || e === null || !("value" in e))
      throw damaged(file, `entry "${key}" has no value`);
    const entry: TableEntry = { text: JSON.stringify(e.value) };
    if (e.expiresAt !== undefined) {
      if (typeof e.expiresAt !== "number") throw damaged(file, `entry "${key}" has a bad expiresAt`);
      entry.expiresAt = e.expiresAt;
    }
    entries.push([key, entry]);
  }
  return { generation: parsed.generation as number, entries };
}

function damaged(file: string, why: string): StateError {
  return new StateError(
    "STATE_CORRUPT",
    `State file ${file} is damaged: ${why}. bothost replaces it atomically, so something else changed it. Restore the state directory from a backup, or move it aside to start with empty state (bots then lose their cursors and stored data).`,
  );
}
