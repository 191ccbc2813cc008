/**
 * The Lua scripts behind every write of the Redis store. Each runs atomically on the server, so a
 * write and its fence check can never be separated: a write carrying a fence (`ARGV[1]`, the
 * lease value the writer believes it holds; `KEYS[2]`, the lease key) happens only if the lease
 * key still holds exactly that value at that instant. An empty `ARGV[1]` means "no fence" (the
 * single-instance case), and `KEYS[2]` is then the key itself.
 */

const FENCE = `
if ARGV[1] ~= '' and redis.call('GET', KEYS[2]) ~= ARGV[1] then
  return redis.error_reply('BOTHOST_FENCED the lease is held by another instance or has expired')
end
`;

/** ARGV[2] value, ARGV[3] ttl in ms or ''. Returns 1. */
const set = `${FENCE}
if ARGV[3] == '' then
  redis.call('SET', KEYS[1], ARGV[2])
else
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
end
return 1
`;

/** ARGV[2] value, ARGV[3] ttl in ms or ''. Returns 1 if created, 0 if the key existed. */
const setIfAbsent = `${FENCE}
local created
if ARGV[3] == '' then
  created = redis.call('SET', KEYS[1], ARGV[2], 'NX')
else
  created = redis.call('SET', KEYS[1], ARGV[2], 'NX', 'PX', ARGV[3])
end
if created then return 1 else return 0 end
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
elseif ARGV[6] ~= '' then
  redis.call('SET', KEYS[1], ARGV[5], 'PX', ARGV[6])
elseif current then
  redis.call('SET', KEYS[1], ARGV[5], 'KEEPTTL')
else
  redis.call('SET', KEYS[1], ARGV[5])
end
return 1
`;

/** Returns how many keys were deleted (0 or 1). */
const remove = `${FENCE}
return redis.call('DEL', KEYS[1])
`;

/** Every script takes two keys (the key, then the fence key) and the fence value first. */
export const storeScripts = {
  bothostSet: set,
  bothostSetIfAbsent: setIfAbsent,
  bothostCompareAndSet: compareAndSet,
  bothostDelete: remove,
} as const;

export type StoreScript = keyof typeof storeScripts;

/** The error text a refused fenced write comes back with. */
export const FENCED_REPLY = "BOTHOST_FENCED";
