/**
 * Which primary the Sentinels name now, by a majority of every Sentinel configured: asked of each
 * one at once, on a connection of its own that is closed after the answer.
 *
 * A connection through Sentinel can stay on a primary the Sentinels already replaced: after a
 * `+switch-master` the client asks one Sentinel for the primary again, and one that has not heard
 * of the switch yet names the old one, which stays writable (with a replica still attached) until
 * the Sentinels demote it. A replica that left such a primary must not stop being waited for
 * (see redis-replication.ts), so its departure is checked against the Sentinels first. Primaries
 * are compared by run id (`SENTINEL MASTER`'s `runid`, the node's `INFO server`), which holds
 * however the Sentinels and the client name its address.
 */
import { Redis } from "ioredis";
import { hostPort, type SentinelTarget } from "./redis-url.ts";

/**
 * The run id of the primary that more than half of the Sentinels name; undefined when no majority
 * agrees (a failover under way, Sentinels out of reach, a primary they have not read yet).
 */
export async function primaryByMajority(
  target: SentinelTarget,
  timeoutMs: number,
): Promise<string | undefined> {
  const named = await Promise.all(target.sentinels.map((s) => primaryNamedBy(target, s, timeoutMs)));
  const votes = new Map<string, number>();
  for (const runId of named) if (runId) votes.set(runId, (votes.get(runId) ?? 0) + 1);
  const majority = Math.floor(target.sentinels.length / 2) + 1;
  for (const [runId, n] of votes) if (n >= majority) return runId;
  return undefined;
}

/** The run id `INFO server` reports. */
export function runIdOf(info: string): string | undefined {
  return /^run_id:(\w+)/m.exec(info)?.[1];
}

async function primaryNamedBy(
  target: SentinelTarget,
  sentinel: string,
  timeoutMs: number,
): Promise<string | undefined> {
  const client = new Redis({
    ...hostPort(sentinel),
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    ...(target.sentinelPassword !== undefined ? { password: target.sentinelPassword } : {}),
    ...(target.tls ? { tls: {} } : {}),
  });
  client.on("error", () => {});
  try {
    await client.connect();
    const fields = (await client.call("SENTINEL", "MASTER", target.name)) as string[];
    const at = fields.indexOf("runid");
    return at >= 0 && fields[at + 1] ? fields[at + 1] : undefined;
  } catch {
    return undefined;
  } finally {
    client.disconnect();
  }
}
