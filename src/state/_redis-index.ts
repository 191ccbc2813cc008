/**
 * The Redis store's index of its own keys, so that listing a namespace never walks the database:
 * one sorted set per namespace, `<prefix>#ns:<namespace path>`, holds the namespace's own keys
 * (their last segment, all with score 0, so a key prefix is a ZRANGEBYLEX range); `<prefix>#expiring`
 * holds every key written with a ttl, scored by when it expires. Every write script keeps both
 * (the Lua below is prepended to each): a listing costs the namespace's own keys, whatever else the
 * Redis holds. Expired keys leave the index when a listing prunes `#expiring` (every key past its
 * time, a thousand per call) or finds them gone.
 *
 * A store written before the index existed is indexed once, by one SCAN, when a store is opened
 * and `<prefix>#indexed` is absent (docs/operations/upgrading.md).
 */
import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";

/** Lua: `bothostIndexSet(key, ttl)` (ttl in ms, '' for none, 'keep' to leave it) and `bothostIndexDel(key)`. */
export const INDEX_LUA = `
local function bothostIndexOf(key)
  local ns, member = string.match(key, '^(.*/)(.*)$')
  if not ns then ns, member = string.match(key, '^([^:]*:)(.*)$') end
  local prefix = string.match(key, '^([^:]*):')
  return prefix .. '#ns:' .. ns, member, prefix .. '#expiring'
end
local function bothostIndexSet(key, ttl)
  local index, member, expiring = bothostIndexOf(key)
  redis.call('ZADD', index, 0, member)
  if ttl == '' then
    redis.call('ZREM', expiring, key)
  elseif ttl ~= 'keep' then
    local t = redis.call('TIME')
    redis.call('ZADD', expiring, t[1] * 1000 + math.floor(t[2] / 1000) + tonumber(ttl), key)
  end
end
local function bothostIndexDel(key)
  local index, member, expiring = bothostIndexOf(key)
  redis.call('ZREM', index, member)
  redis.call('ZREM', expiring, key)
end
`;

/**
 * KEYS[1] `<prefix>#expiring`. Drops up to 1,000 keys past their expiry from the index (those set
 * again meanwhile carry a later score). Returns how many it dropped.
 */
const pruneLua = `${INDEX_LUA}
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 1000)
for _, key in ipairs(due) do
  if redis.call('EXISTS', key) == 0 then bothostIndexDel(key) else redis.call('ZREM', KEYS[1], key) end
end
return #due
`;

/** KEYS: stored keys found by SCAN. Indexes each that still exists, with its remaining ttl. */
const reindexLua = `${INDEX_LUA}
for _, key in ipairs(KEYS) do
  local ttl = redis.call('PTTL', key)
  if ttl == -1 then bothostIndexSet(key, '') elseif ttl > 0 then bothostIndexSet(key, tostring(ttl)) end
end
return #KEYS
`;

type Commands = {
  bothostPrune(key: string): Promise<number>;
  bothostReindex(count: number, ...keys: string[]): Promise<number>;
};

/** The index of the namespace whose stored keys start with `path` (`<prefix>:` or `<prefix>:a/b/`). */
export function indexKeyOf(prefix: string, path: string): string {
  return `${prefix}#ns:${path}`;
}

/** Drop expired keys from the index (a thousand per call, until none is left). */
export async function pruneExpired(client: Redis, prefix: string): Promise<void> {
  const commands = client as unknown as Commands;
  while ((await commands.bothostPrune(`${prefix}#expiring`)) === 1000) {}
}

/** The keys of the namespace at `path` that start with `start` (both escaped as stored), in order. */
export async function indexedKeys(
  client: Redis,
  prefix: string,
  path: string,
  start: string,
): Promise<string[]> {
  const from = start === "" ? "-" : Buffer.from(`[${start}`);
  const to = start === "" ? "+" : Buffer.concat([Buffer.from(`[${start}`), Buffer.from([0xff])]);
  const members = await client.zrangebylex(indexKeyOf(prefix, path), from as string, to as string);
  return members.map((m) => path + m);
}

/** Remove members whose keys were found gone (expired between a prune and the read). */
export async function forget(client: Redis, prefix: string, path: string, members: string[]): Promise<void> {
  if (members.length > 0) await client.zrem(indexKeyOf(prefix, path), ...members);
}

/**
 * Define the index's commands on `client`, and index every key of the store once, when
 * `<prefix>#indexed` is absent: one SCAN of `<prefix>:*`, logged with the count.
 */
async function indexOnce(
  client: Redis,
  prefix: string,
  log?: { info(obj: object, msg?: string): void },
): Promise<void> {
  client.defineCommand("bothostPrune", { lua: pruneLua, numberOfKeys: 1 });
  client.defineCommand("bothostReindex", { lua: reindexLua });
  const marker = `${prefix}#indexed`;
  if ((await client.exists(marker)) === 1) return;
  const commands = client as unknown as Commands;
  let count = 0;
  const scan = client.scanStream({ match: `${prefix}:*`, count: 1000 });
  for await (const batch of scan as AsyncIterable<string[]>) {
    if (batch.length > 0) count += await commands.bothostReindex(batch.length, ...batch);
  }
  await client.set(marker, "1");
  log?.info({ prefix, keys: count }, "state store: existing keys indexed");
}

/** What {@link openIndex} logs to: an error line when there is a place for one. */
export interface LostDataLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error?(obj: object, msg?: string): void;
}

/**
 * Index a store's keys once ({@link indexOnce}), then watch for Redis losing them: answering
 * again after an outage without `<prefix>#indexed`, or with another `<prefix>#life` than this
 * store saw (the first instance back made the marker again), it restarted without persistence or
 * was flushed. Nothing else would tell: each bot's lease is taken again and the bot starts as on a
 * new store (but for what its instance kept in memory). One line says so, and the index is made
 * again (so a next loss is told too).
 */
export async function openIndex(
  client: Redis,
  prefix: string,
  where: string,
  log?: LostDataLog,
): Promise<void> {
  await indexOnce(client, prefix, log);
  if (log === undefined) return;
  // The keys' life, a random id written once on a Redis without it: the `#indexed` marker alone
  // is made again by the first instance back after a loss, and the others would find it there.
  const life = `${prefix}#life`;
  const seen = async () => {
    await client.set(life, randomBytes(8).toString("hex"), "NX");
    return client.get(life);
  };
  let known = await seen();
  // Every `ready` from now on is a reconnection.
  client.on("ready", () => {
    void (async () => {
      const now = await client.get(life);
      const indexed = (await client.exists(`${prefix}#indexed`)) === 1;
      if (indexed && now !== null && now === known) return;
      known = await seen();
      const line = log.error?.bind(log) ?? log.warn.bind(log);
      line(
        { redis: where, prefix },
        "Redis came back without bothost's keys (restarted without persistence, or flushed): a bot this instance ran goes on from where it was here (the other instances leave it to this one for a lease ttl), one whose instance is gone too starts over from the newest message (what was sent meanwhile is not handled); open dialogs, dead letters, recorded effects and ctx.state are gone. Run Redis with appendonly yes",
      );
      if (!indexed) await indexOnce(client, prefix, log);
    })().catch(() => {}); // Redis lost again: the next reconnection checks again
  });
}

/** Every stored key starting with `path`, found by SCAN (the index aside). */
export async function keysUnder(client: Redis, path: string): Promise<string[]> {
  const found = new Set<string>();
  const scan = client.scanStream({ match: `${globEscape(path)}*`, count: 1000 });
  for await (const batch of scan as AsyncIterable<string[]>) for (const k of batch) found.add(k);
  return [...found];
}

/** SCAN MATCH treats `* ? [ ] \` as pattern characters. */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}
