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
 *
 * Also how many of the configured Sentinels answer at all ({@link SentinelWatch}): with too few,
 * the primary keeps working but its next failure cannot be failed over, which nothing else shows.
 */
import { Redis } from "ioredis";
import { authRefusal } from "./redis-connection.ts";
import { hostPort, type SentinelsReached, type SentinelTarget } from "./redis-url.ts";

/**
 * The run id of the primary that more than half of the Sentinels name; undefined when no majority
 * agrees (a failover under way, Sentinels out of reach, a primary they have not read yet).
 */
export async function primaryByMajority(
  target: SentinelTarget,
  timeoutMs: number,
): Promise<string | undefined> {
  const named = await Promise.all(
    target.sentinels.map(async (s) => (await masterOf(target, s, timeoutMs))?.runid),
  );
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

type WatchLog = { warn(obj: object, msg?: string): void; info?(obj: object, msg?: string): void };

/** Logged (warn) when fewer Sentinels than a failover needs answer. */
export const TOO_FEW_SENTINELS =
  "too few Sentinels answer: the primary works, but if it fails no failover can happen";
/** Logged (info) when enough Sentinels answer again, or when their number changes while enough. */
export const SENTINELS_CHANGED = "the Sentinels answering changed";

/**
 * Asks every configured Sentinel for the master group on each {@link check}, keeps the last
 * answer for the status, and logs only when the number answering changes (a warn line while too
 * few for a failover, info otherwise), not at each check. A Sentinel refusing the password is
 * told apart from a silent one, and one naming another primary than a majority of them all
 * (isolated from a failover, or monitoring another server under that name) is listed.
 */
export class SentinelWatch {
  #last: SentinelsReached | undefined;
  #running: Promise<SentinelsReached> | undefined;

  /** `timeoutMs`: how long a Sentinel may take to answer (a loaded host answers late, not never). */
  constructor(
    private readonly target: SentinelTarget,
    private readonly timeoutMs: number,
    private readonly log: WatchLog | undefined,
  ) {}

  get last(): SentinelsReached | undefined {
    return this.#last;
  }

  /** One round of asking; a check asked for while one runs is that one. */
  check(): Promise<SentinelsReached> {
    this.#running ??= this.#check().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #check(): Promise<SentinelsReached> {
    const { sentinels } = this.target;
    const answers = await Promise.all(sentinels.map((s) => askMaster(this.target, s, this.timeoutMs)));
    const fields = answers.map((a) => (a && "fields" in a ? a.fields : undefined));
    const quorum = Math.max(0, ...fields.map((f) => Number(f?.quorum ?? 0)));
    const named = fields.map((f) => (f ? `${f.ip}:${f.port}` : undefined));
    const count = (addr: string) => named.filter((n) => n === addr).length;
    const majority = named.find((n) => n !== undefined && count(n) > sentinels.length / 2);
    const now: SentinelsReached = {
      answered: fields.filter(Boolean).length,
      of: sentinels.length,
      needed: Math.max(quorum, Math.floor(sentinels.length / 2) + 1),
      silent: sentinels.filter((_, i) => !answers[i]),
    };
    const refusing = sentinels.flatMap((sentinel, i) => {
      const a = answers[i];
      return a && "refused" in a ? [{ sentinel, why: a.refused }] : [];
    });
    if (refusing.length > 0) now.refusing = refusing;
    const otherPrimary = sentinels.flatMap((sentinel, i) => {
      const names = named[i];
      return majority && names && names !== majority ? [{ sentinel, names }] : [];
    });
    if (otherPrimary.length > 0) now.otherPrimary = otherPrimary;
    const before = this.#last;
    this.#last = now;
    const low = now.answered < now.needed;
    if (before === undefined ? low : before.answered !== now.answered) {
      const { silent, ...counts } = now;
      if (low) this.log?.warn({ ...counts, silent, master: this.target.name }, TOO_FEW_SENTINELS);
      else this.log?.info?.({ ...counts, silent, master: this.target.name }, SENTINELS_CHANGED);
    }
    return now;
  }
}

/** `SENTINEL MASTER <name>` as asked of one Sentinel, as fields; undefined when it does not answer for it. */
async function masterOf(
  target: SentinelTarget,
  sentinel: string,
  timeoutMs: number,
): Promise<Record<string, string> | undefined> {
  const answer = await askMaster(target, sentinel, timeoutMs);
  return answer && "fields" in answer ? answer.fields : undefined;
}

/**
 * `SENTINEL MASTER <name>` asked of one Sentinel: its fields, why it refused the authentication
 * (in words naming `state.redis.sentinel_password`), or undefined when it did not answer for it.
 */
async function askMaster(
  target: SentinelTarget,
  sentinel: string,
  timeoutMs: number,
): Promise<{ fields: Record<string, string> } | { refused: string } | undefined> {
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
  let authError: string | undefined;
  client.on("error", (err: Error) => {
    authError ??= authRefusal(err.message, SENTINEL_PASSWORD);
  });
  try {
    await client.connect();
    const fields = (await client.call("SENTINEL", "MASTER", target.name)) as string[];
    const out: Record<string, string> = {};
    for (let i = 0; i + 1 < fields.length; i += 2) out[fields[i]!] = fields[i + 1]!;
    return { fields: out };
  } catch (err) {
    const refused = authRefusal((err as Error).message, SENTINEL_PASSWORD) ?? authError;
    return refused ? { refused } : undefined;
  } finally {
    client.disconnect();
  }
}

const SENTINEL_PASSWORD = "state.redis.sentinel_password";
