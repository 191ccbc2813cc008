/**
 * What a connection knows of replication: which primary it reaches (a change of address is a
 * failover), and, through Sentinel, whether a write reached the replicas before the caller acts on it.
 *
 * Redis replicates asynchronously: a write the primary acknowledged can be missing on the replica
 * Sentinel promotes, and a primary that was frozen or demoted keeps accepting writes that are then
 * discarded. The writes bothost keeps (leases, the ledger, effect records, dialog answers, once
 * markers) are therefore confirmed with `WAIT <every replica> <bound>` after their reply (the
 * replicas, told apart by address, counted at each connect, every few seconds, and again right
 * after each WAIT, so a replica that came online since is waited for too before the write counts,
 * and one that left still is for a while): one WAIT covers every
 * write its connection answered before it was sent, so concurrent writes share one (a group
 * commit), and a write answered on a connection that has since closed is not confirmed by a WAIT
 * on the next one (the new primary knows nothing of it).
 */
import type { Redis } from "ioredis";
import { monotonicMs } from "../time/clock.ts";
import type { RedisStatus, RedisTarget, SentinelTarget } from "./redis-url.ts";
import { primaryByMajority, runIdOf, SentinelWatch } from "./sentinel-vote.ts";
import { StateError } from "./state-error.ts";

/** How often the replicas a write must reach are counted again (INFO replication). */
const REPLICA_COUNT_EVERY_MS = 5_000;
/** How long each Sentinel is given to say which primary it names. */
const SENTINEL_ASK_MS = 1_000;
/**
 * How long each Sentinel is given to answer the check of how many answer (every 5 s): a Sentinel
 * on a loaded host answers late, and counting it as silent would warn of a failover that can happen.
 */
const SENTINEL_WATCH_MS = 4_000;

/** Where a connection's failovers and replica waits are reported (the daemon's `/metrics`). */
export interface ReplicationSink {
  /** The primary's address changed (a failover, or a demoted primary left). */
  failover(primary: string): void;
  /** A write waited `seconds` for the replicas: `confirmed` when they had it in time. */
  waited(seconds: number, confirmed: boolean): void;
}

interface ReplicationOptions {
  /** Confirm writes on the replicas (Sentinel); without, `confirm` resolves at once. */
  waitForReplica: boolean;
  /** WAIT's bound, in ms: a write not on the replicas by then is not confirmed. */
  waitMs: number;
  /** Shown in messages, e.g. "state" or "leases". */
  role: string;
  log?: { warn(obj: object, msg?: string): void; info?(obj: object, msg?: string): void } | undefined;
  /** Through Sentinel: asked before a replica that left stops being waited for. */
  sentinel?: SentinelTarget | undefined;
  /** Through Sentinel: count the Sentinels answering at each count of the replicas, for the status (one connection's job). */
  watchSentinels?: boolean | undefined;
  /** How often the replicas are counted again (default {@link REPLICA_COUNT_EVERY_MS}). */
  countEveryMs?: number | undefined;
}

interface Waited {
  acked: number;
  /** How many replicas it asked for. */
  needed: number;
  /** The connection the WAIT was answered on (undefined: it failed). */
  stream: unknown;
  error?: unknown;
}

export class Replication {
  #primary: string | undefined;
  #failovers = 0;
  #current: Promise<Waited> | undefined;
  /** How many replicas a write must reach: every one seen online in this count or the last. */
  #needed = 1;
  /** Each replica (`ip:port`) seen online on this primary, and the count it was last seen in. */
  #seen = new Map<string, number>();
  /** The counts taken so far (the timer's). */
  #count = 0;
  #countTimer: NodeJS.Timeout | undefined;
  #queued: Promise<Waited> | undefined;
  readonly #sinks = new Set<ReplicationSink>();
  readonly #onFailover = new Set<(primary: string) => void>();
  readonly #sentinels: SentinelWatch | undefined;

  constructor(
    private readonly client: Redis,
    private readonly o: ReplicationOptions,
  ) {
    if (o.sentinel && o.watchSentinels)
      this.#sentinels = new SentinelWatch(o.sentinel, SENTINEL_WATCH_MS, o.log);
    client.on("ready", () => this.#connected());
    if (client.status === "ready") this.#connected();
    void this.#sentinels?.check();
    if (o.waitForReplica || this.#sentinels) {
      const every = o.countEveryMs ?? REPLICA_COUNT_EVERY_MS;
      this.#countTimer = setInterval(() => {
        if (o.waitForReplica) void this.#countReplicas();
        void this.#sentinels?.check();
      }, every);
      this.#countTimer.unref();
      client.once("end", () => clearInterval(this.#countTimer));
    }
  }

  /** `host:port` of the primary this connection reaches now (or last reached). */
  get primary(): string | undefined {
    return this.#primary;
  }

  /** Primary changes seen since the connection opened. */
  get failovers(): number {
    return this.#failovers;
  }

  get waitsForReplica(): boolean {
    return this.o.waitForReplica;
  }

  /** What the status shows of this connection to `target`. */
  status(target: RedisTarget): RedisStatus {
    return {
      ...(this.#primary !== undefined ? { primary: this.#primary } : {}),
      ...(typeof target !== "string"
        ? { sentinel: { name: target.name, sentinels: [...target.sentinels] } }
        : {}),
      ...(this.#sentinels?.last ? { sentinelsReached: this.#sentinels.last } : {}),
      failovers: this.#failovers,
      replicaConfirmed: this.o.waitForReplica,
      ...(this.client.status !== "ready" ? { disconnected: true as const } : {}),
    };
  }

  /** Report failovers and waits to `sink` from now on. */
  report(sink: ReplicationSink): void {
    this.#sinks.add(sink);
  }

  /** Call `listener` after each change of primary (the connection is ready on the new one). */
  onFailover(listener: (primary: string) => void): void {
    this.#onFailover.add(listener);
  }

  /**
   * Resolves once the replicas have every write this connection answered before the call; rejects
   * with `STATE_UNAVAILABLE` when none confirms within the bound or the connection changed.
   * Call it right after a write's reply, before acting on the write.
   */
  async confirm(what: string): Promise<void> {
    if (!this.o.waitForReplica) return;
    const answeredOn = this.client.stream;
    const started = monotonicMs();
    const waited = await this.#nextWait();
    const confirmed = waited.stream === answeredOn && waited.acked >= waited.needed;
    const seconds = (monotonicMs() - started) / 1000;
    for (const sink of this.#sinks) sink.waited(seconds, confirmed);
    if (confirmed) return;
    const why =
      waited.error !== undefined
        ? `the WAIT for it failed (${describe(waited.error)})`
        : waited.stream !== answeredOn
          ? "the connection to the primary closed before the replicas confirmed it"
          : `${waited.needed === 1 ? "no replica" : `fewer than all ${waited.needed} replicas`} confirmed it within ${this.o.waitMs} ms`;
    throw new StateError(
      "STATE_UNAVAILABLE",
      `Redis (${this.o.role}) accepted ${what}, but ${why}: a failover could lose it, so it does not count. Check that the replicas run and replicate from the primary (INFO replication).`,
    );
  }

  /** The WAIT that will cover a write answered now: the one not yet sent, or a new one. */
  #nextWait(): Promise<Waited> {
    if (this.#current === undefined) return this.#send();
    this.#queued ??= this.#current.then(() => {
      this.#queued = undefined;
      return this.#send();
    });
    return this.#queued;
  }

  #send(): Promise<Waited> {
    const sent = this.#waitForEvery(this.#needed);
    this.#current = sent;
    void sent.then(() => {
      if (this.#current === sent) this.#current = undefined;
    });
    return sent;
  }

  /**
   * WAIT for `needed` replicas, then for every replica online when it answered: the replicas are
   * counted again by an INFO sent right behind the WAIT on the same connection (answered after
   * it, no extra round trip). A replica that came online since the last count (one revived, or
   * given to this primary by Sentinel) could be the one promoted next; a write only the others
   * have would be lost then, so it is waited for within what is left of the bound.
   */
  async #waitForEvery(needed: number): Promise<Waited> {
    const started = monotonicMs();
    try {
      const [acked, info] = await Promise.all([
        this.client.wait(needed, this.o.waitMs),
        this.client.info("replication"),
      ]);
      // Seen in the current count: once gone, it is still waited for until two counts missed it.
      for (const replica of onlineReplicas(info)) this.#seen.set(replica, this.#count);
      const every = Math.max(this.#needed, waitingFor(this.#seen, this.#count));
      this.#needed = every;
      if (acked < needed || acked >= every) return { acked, needed, stream: this.client.stream };
      const left = Math.max(1, Math.ceil(this.o.waitMs - (monotonicMs() - started)));
      const again = await this.client.wait(every, left);
      return { acked: again, needed: every, stream: this.client.stream };
    } catch (error) {
      return { acked: 0, needed, stream: undefined, error };
    }
  }

  /**
   * Every replica the primary has, not only one: in a graceful failover the old primary keeps a
   * replica that is about to resync from the new one (dropping what it got meanwhile) while the
   * promoted one already left; a write only that replica confirmed would be lost. A replica that
   * left for good is no longer waited for after two counts.
   */
  async #countReplicas(): Promise<void> {
    const info = await this.client.info("replication").catch(() => undefined);
    if (info === undefined) return;
    // A replica missing from one count only is still waited for: during a graceful failover the
    // promoted one has left and the other is about to resync, and a count then must not let that
    // one alone confirm writes. Replicas are told apart by address: one leaving as another comes
    // keeps the count equal, and must not let the newcomer alone confirm writes either.
    const count = this.#count + 1;
    const online = onlineReplicas(info);
    const seen = new Map([...this.#seen].filter(([, at]) => at >= count - 1));
    for (const replica of online) seen.set(replica, count);
    const needed = waitingFor(seen, count);
    const missing = [...this.#seen.keys()].some((replica) => !online.includes(replica));
    // A replica missing: this primary may be one the Sentinels already replaced, still writable
    // with the replica that will resync from the new one (sentinel-vote.ts). The count moves on
    // only while a majority of them still name it.
    if ((missing || needed < this.#needed) && !(await this.#stillPrimary())) return;
    this.#count = count;
    this.#seen = seen;
    this.#needed = needed;
  }

  /**
   * Whether a majority of the Sentinels name the primary this connection reaches (true without
   * Sentinel). When they name another, the connection is dropped so that the client asks them again.
   */
  async #stillPrimary(): Promise<boolean> {
    const sentinel = this.o.sentinel;
    if (sentinel === undefined) return true;
    const [named, own] = await Promise.all([
      primaryByMajority(sentinel, SENTINEL_ASK_MS),
      this.client.info("server").then(runIdOf, () => undefined),
    ]);
    if (named !== undefined && own !== undefined && named !== own) {
      this.o.log?.warn(
        { role: this.o.role, primary: this.#primary },
        "the Sentinels name another primary than the one this connection reaches; reconnecting",
      );
      this.client.disconnect(true);
    }
    return named !== undefined && named === own;
  }

  #connected(): void {
    if (this.o.waitForReplica) void this.#countReplicas();
    const stream = this.client.stream as { remoteAddress?: string; remotePort?: number } | undefined;
    if (!stream?.remoteAddress) return;
    const address = `${stream.remoteAddress.includes(":") ? `[${stream.remoteAddress}]` : stream.remoteAddress}:${stream.remotePort}`;
    const before = this.#primary;
    this.#primary = address;
    if (before === undefined || before === address) return;
    this.#seen = new Map();
    this.#needed = 1;
    this.#failovers++;
    this.o.log?.warn({ role: this.o.role, was: before, now: address }, "redis primary changed (failover)");
    for (const sink of this.#sinks) sink.failover(address);
    for (const listener of this.#onFailover) listener(address);
  }
}

/** The replicas (`ip:port`) `INFO replication` lists as online. */
function onlineReplicas(info: string): string[] {
  const online: string[] = [];
  for (const line of info.split("\n")) {
    const m = /^slave\d+:ip=([^,]+),port=(\d+),state=online/.exec(line);
    if (m) online.push(`${m[1]}:${m[2]}`);
  }
  return online;
}

/** How many of `seen` were online in count `count` or the one before it (at least 1). */
function waitingFor(seen: ReadonlyMap<string, number>, count: number): number {
  let n = 0;
  for (const at of seen.values()) if (at >= count - 1) n++;
  return Math.max(1, n);
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message.replace(/\.$/, "") : String(err);
}
