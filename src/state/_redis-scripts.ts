/**
 * The Lua scripts behind the Redis store's single-key writes (set, update's compare-and-set,
 * delete): each checks the fence and writes, with the key's index entry, in one atomic step on
 * the server (see redis-store.ts). A refused fence comes back as an error starting with
 * {@link FENCED_REPLY}. A batch of writes has its own script (_redis-batch.ts).
 */
import type { Redis } from "ioredis";
import { INDEX_LUA } from "./_redis-index.ts";

const FENCE = `${INDEX_LUA}
if ARGV[1] ~= '' and redis.call('GET', KEYS[2]) ~= ARGV[1] then
  return redis.error_reply('BOTHOST_FENCED the lease is held by another instance or has expired')
end
`;

/**
 * ARGV[2] value, ARGV[3] ttl in ms or '', ARGV[4] 'NX' to create only. Returns 1 if written, 0 if
 * not (NX, and the key existed).
 */
const set = `${FENCE}
local args = { 'SET', KEYS[1], ARGV[2] }
if ARGV[3] ~= '' then
  table.insert(args, 'PX')
  table.insert(args, ARGV[3])
end
if ARGV[4] == 'NX' then table.insert(args, 'NX') end
if redis.call(unpack(args)) then
  bothostIndexSet(KEYS[1], ARGV[3])
  return 1
end
return 0
`;

/**
 * Compare-and-set for `update`: ARGV[2] '1' if a value is expected ('0': the key must be absent),
 * ARGV[3] the expected text, ARGV[4] 'set' or 'del', ARGV[5] the new text, ARGV[6] a ttl in ms or
 * '' to keep the current expiry. Returns 1 when written, 0 when the value had changed meanwhile.
 */
const compareAndSet = `${FENCE}
local current = redis.call('GET', KEYS[1])
if ARGV[2] == '1' then
  if current ~= ARGV[3] then return 0 end
elseif current then
  return 0
end
if ARGV[4] == 'del' then
  redis.call('DEL', KEYS[1])
  bothostIndexDel(KEYS[1])
elseif ARGV[6] ~= '' then
  redis.call('SET', KEYS[1], ARGV[5], 'PX', ARGV[6])
  bothostIndexSet(KEYS[1], ARGV[6])
elseif current then
  redis.call('SET', KEYS[1], ARGV[5], 'KEEPTTL')
  bothostIndexSet(KEYS[1], 'keep')
else
  redis.call('SET', KEYS[1], ARGV[5])
  bothostIndexSet(KEYS[1], '')
end
return 1
`;

/** Returns how many keys were deleted (0 or 1). */
const remove = `${FENCE}
bothostIndexDel(KEYS[1])
return redis.call('DEL', KEYS[1])
`;

/** Every script takes two keys (the key, then the fence key) and the fence value first. */
const storeScripts = {
  bothostSet: set,
  bothostCompareAndSet: compareAndSet,
  bothostDelete: remove,
} as const;

export type StoreScript = keyof typeof storeScripts;
/** The error text a refused fenced write comes back with. */
export const FENCED_REPLY = "BOTHOST_FENCED";

type ScriptFn = (key: string, fenceKey: string, fence: string, ...args: string[]) => Promise<number>;

/** Load the scripts into `client` under their names (once, as it opens). */
export function defineStoreScripts(client: Redis): void {
  for (const [name, lua] of Object.entries(storeScripts))
    client.defineCommand(name, { lua, numberOfKeys: 2 });
}

/** `script` on `client`: the key, the fence key and the fence value, then the script's own arguments. */
export function storeScript(client: Redis, script: StoreScript): ScriptFn {
  return (client as unknown as Record<StoreScript, ScriptFn>)[script].bind(client);
}
