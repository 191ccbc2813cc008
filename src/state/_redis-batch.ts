/**
 * `applyWrites` in Redis: read the keys (and the marker), fold the writes over them in JS, then
 * one Lua script checks the fence, the marker and that every key still holds what was read, and
 * writes everything (and the marker) at once; if another writer got in between, read and fold
 * again. An `update`'s function therefore runs against the value current at the write, as a
 * single-key `update` does, and the whole batch is one atomic step on the server. A batch whose
 * updates each say what they expect (`expect`) and whose other keys are only set or deleted
 * skips the read: its first try checks the expected texts, and reads only when they differ.
 */
import type { Redis } from "ioredis";
import { INDEX_LUA } from "./_redis-index.ts";
import { foldWrites, keysOf } from "./_writes.ts";
import { StateError } from "./state-error.ts";
import type { StoreWrite } from "./state-store.ts";

/**
 * KEYS[1] the fence key (the marker when unfenced), KEYS[2] the marker ('' for none), KEYS[3..]
 * the batch's keys. ARGV[1] the fence value ('' for none), ARGV[2] the marker's ttl in ms, then
 * for each key five values: '1' if it was read present (its text next), '0' if absent, '2' if
 * its new value does not depend on it (not checked), the action
 * ('set', 'del' or '' to leave it), the new text, the expiry ('keep', 'none' or ms). Returns 1
 * when written, 0 when a key changed since it was read, 2 when the marker was there.
 */
export const applyBatchScript = `${INDEX_LUA}
if ARGV[1] ~= '' and redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('BOTHOST_FENCED the lease is held by another instance or has expired')
end
if KEYS[2] ~= '' and redis.call('EXISTS', KEYS[2]) == 1 then return 2 end
for i = 3, #KEYS do
  local a = 3 + (i - 3) * 5
  local current = redis.call('GET', KEYS[i])
  if ARGV[a] == '1' then
    if current ~= ARGV[a + 1] then return 0 end
  elseif ARGV[a] == '0' and current then
    return 0
  end
end
for i = 3, #KEYS do
  local a = 3 + (i - 3) * 5
  local action, text, expiry = ARGV[a + 2], ARGV[a + 3], ARGV[a + 4]
  if action == 'del' then
    redis.call('DEL', KEYS[i])
    bothostIndexDel(KEYS[i])
  elseif action == 'set' then
    if expiry == 'keep' then
      redis.call('SET', KEYS[i], text, 'KEEPTTL')
      bothostIndexSet(KEYS[i], 'keep')
    elseif expiry == 'none' then
      redis.call('SET', KEYS[i], text)
      bothostIndexSet(KEYS[i], '')
    else
      redis.call('SET', KEYS[i], text, 'PX', expiry)
      bothostIndexSet(KEYS[i], expiry)
    end
  end
end
if KEYS[2] ~= '' then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
  bothostIndexSet(KEYS[2], ARGV[2])
end
return 1
`;

const MAX_ATTEMPTS = 100;

export interface BatchTarget {
  client: Redis;
  /** `key` → its stored Redis key. */
  stored(key: string): string;
  /** The marker's stored key, if the batch has one, and its ttl. */
  marker: { stored: string; ttlMs: number } | undefined;
  fence: { key: string; value: string } | undefined;
  /** Runs a command, mapping its errors (a fenced reply, Redis out of reach). */
  call<T>(what: string, op: () => Promise<T>): Promise<T>;
  /** Runs the script (tracked as a pending write). */
  write(keys: string[], args: string[]): Promise<number>;
}

/** Apply `writes` atomically (see the module comment); false when the marker was there. */
export async function applyBatch(t: BatchTarget, writes: readonly StoreWrite[]): Promise<boolean> {
  const keys = keysOf(writes);
  const stored = keys.map((k) => t.stored(k));
  const reads = t.marker ? [t.marker.stored, ...stored] : stored;
  const expected = t.marker ? undefined : expectations(writes);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    let current: Map<string, string | undefined | typeof BLIND>;
    if (attempt === 0 && expected !== undefined) current = expected;
    else {
      const texts = reads.length > 0 ? await t.call("read", () => t.client.mget(...reads)) : [];
      if (t.marker && texts[0] !== null) return false;
      current = new Map(keys.map((k, i) => [k, texts[i + (t.marker ? 1 : 0)] ?? undefined]));
    }
    const now = (k: string) => {
      const text = current.get(k);
      return text === BLIND ? undefined : text;
    };
    const finals = new Map(foldWrites(writes, now).map((f) => [f.key, f]));
    const args = [t.fence?.value ?? "", String(t.marker?.ttlMs ?? 0)];
    for (const key of keys) {
      const read = current.get(key);
      const f = finals.get(key);
      const action = f === undefined ? "" : f.text === undefined ? "del" : "set";
      const expiry = f === undefined ? "" : typeof f.expiry === "string" ? f.expiry : String(ttlOf(f.expiry));
      const check = read === BLIND ? "2" : read === undefined ? "0" : "1";
      args.push(check, read === BLIND ? "" : (read ?? ""), action, f?.text ?? "", expiry);
    }
    const fenceKey = t.fence?.key ?? t.marker?.stored ?? stored[0] ?? "";
    const result = await t.write([fenceKey, t.marker?.stored ?? "", ...stored], args);
    if (result === 1) return true;
    if (result === 2) return false;
  }
  throw new StateError(
    "STATE_UNAVAILABLE",
    `applying a handler's state writes lost ${MAX_ATTEMPTS} compare-and-set races in a row (keys ${keys.join(", ")}); they are being written too often by others. Retry later.`,
  );
}

/** A key whose new value does not depend on what it holds: not read, not checked. */
const BLIND = Symbol("blind");

/**
 * What the keys are expected to hold when no read is needed: each key's first write is a set or
 * a delete, or an update saying what it expects. Undefined when some key must be read.
 */
function expectations(
  writes: readonly StoreWrite[],
): Map<string, string | undefined | typeof BLIND> | undefined {
  const expected = new Map<string, string | undefined | typeof BLIND>();
  for (const w of writes) {
    if (expected.has(w.key)) continue;
    if (w.op === "set" || w.op === "delete") expected.set(w.key, BLIND);
    else if (w.op === "update" && w.expect !== undefined) expected.set(w.key, w.expect ?? undefined);
    else return undefined;
  }
  return expected;
}

function ttlOf(ms: number): number {
  return Math.max(1, Math.ceil(ms));
}
