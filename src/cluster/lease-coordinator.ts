/**
 * Several instances, one organization: each bot runs on exactly one instance at a time, the one
 * holding its lease in Redis. Every round (each `ttl/3`) an instance says it is alive, renews its
 * leases, and takes free bots or hands one over (stop it gracefully, then release the lease) so
 * that the instances split the bots fairly, within one of each other (see `balance.ts`). A dead
 * instance's leases expire after the ttl (one of this host's: at once, gone-holders.ts) and the
 * others take its bots, which resume from the shared cursor and replay what was missed.
 *
 * The timing rule that keeps two instances from running one bot at the same time: a lease is
 * written with a `ttl` expiry on Redis's clock, at some instant after the holder sent the
 * command. The holder counts it valid only until `sent + ttl·2/3` on its own monotonic clock,
 * renews every `ttl/3` (twice inside each validity window), and once a renewal is overdue stops
 * the bot, aborting handlers still running `ttl/6` later. Another instance can take the lease
 * only after Redis expired it, at `≥ sent + ttl`. So the old holder has stopped at least `ttl/6`
 * before the new one can start: that margin absorbs clock-rate drift and scheduling delays. A
 * process frozen for longer (a stopped VM, an event loop starved on a loaded machine) can still
 * wake up mid-handler, its replies read before its overdue timers fire: its state writes are then
 * refused by the fence, and so is an effect whose claim it takes only then (effect-claims.ts reads
 * the fence before the effect begins); a message whose send was under way when it froze is sent.
 *
 * Through Sentinel the rule holds across a failover because only renewals a replica confirmed
 * extend a lease's validity (see redis-leases.ts), and when either connection finds a new primary
 * a round runs at once: it re-reads every lease held here on that primary, and a bot whose lease
 * is not there as this instance holds it stops before doing more.
 *
 * held-leases.ts keeps the leases held here: their taking, validity, watchdogs, renewal and loss.
 */
import { createHash, randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Logger } from "pino";
import type { Fence } from "../state/redis-connection.ts";
import type { ReplicationSink } from "../state/redis-replication.ts";
import type { RedisStore } from "../state/redis-store.ts";
import type { StateStore } from "../state/state-store.ts";
import { balance, refusalsOf } from "./balance.ts";
import type { Coordinator, CoordinatorHooks, LeasesUnread } from "./coordinator.ts";
import { leavingDead, type TakeFrom, thisProcess } from "./gone-holders.ts";
import { HeldLeases } from "./held-leases.ts";
import { LeaseHolders } from "./lease-holders.ts";
import { errorText, type HaltNotes, haltBot, leaseTiming } from "./lease-parts.ts";
import { type ClusterView, RedisLeases } from "./redis-leases.ts";

export interface LeaseCoordinatorOptions {
  store: RedisStore;
  /** Every configured bot (each instance is expected to have the same list). */
  bots: readonly string[];
  ttlMs: number;
  /** How long a bot handed over to another instance may take to stop (the daemon's shutdown_timeout). */
  handoverDeadlineMs: number;
  log: Logger;
  /** Default `<host>:<pid>:<random>`. */
  instanceId?: string;
  /**
   * The monotonic clock (ms) that the age of the leases' last read and the lateness of rounds are
   * measured on; default `performance.now()`. A test moves it on to stand for a blocked event loop.
   */
  now?: () => number;
}

export class LeaseCoordinator implements Coordinator {
  readonly mode = "cluster";
  readonly instanceId: string;
  readonly timing: ReturnType<typeof leaseTiming>;
  readonly #o: LeaseCoordinatorOptions;
  readonly #order: readonly string[];
  readonly #held: HeldLeases;
  readonly #halting = new Map<string, Promise<void>>();
  readonly #stores = new Map<string, StateStore>();
  /** Bots that failed to start here, left to the other instances (see `startFailed`). */
  readonly #refused = new Set<string>();
  #leases: RedisLeases | undefined;
  #hooks: CoordinatorHooks | undefined;
  #timer: NodeJS.Timeout | undefined;
  #round: Promise<string[]> | undefined;
  #draining = false;
  #closed = false;
  #alive = 0;
  #aliveBefore = 0;
  #failing = false;
  /** When (on `#now`) the next round is due; when the round under way was (`#round` set). */
  #dueAt = 0;
  /** How late past `#dueAt` the round under way began. */
  #startedLateMs = 0;
  readonly #now: () => number;
  /** A failover (or a reconnection) was seen during a round: run the next one at once. */
  #reReadDue = false;
  #sink: ReplicationSink | undefined;
  readonly #holders: LeaseHolders;
  /** This process, as its heartbeats say it (gone-holders.ts). */
  #proc: string | undefined;

  constructor(options: LeaseCoordinatorOptions) {
    this.#o = options;
    this.timing = leaseTiming(options.ttlMs);
    this.#now = options.now ?? (() => performance.now());
    // A lease found held elsewhere by an acquisition or renewal names its holder at once.
    this.#held = new HeldLeases(
      this.timing,
      options.log,
      (...halt) => this.#halt(...halt),
      (bot, by) => this.#holders.found(bot, by.holder, by.leftMs),
    );
    this.instanceId = options.instanceId ?? `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
    this.#holders = new LeaseHolders(this.instanceId, this.timing.ttlMs, this.#now);
    // Rendezvous order: each instance prefers different bots, so fewer of them race for one lease.
    const rank = (bot: string) => createHash("sha256").update(`${this.instanceId}\n${bot}`).digest("hex");
    this.#order = [...options.bots].sort((a, b) => (rank(a) < rank(b) ? -1 : 1));
  }

  /** Report the lease connection's failovers and replica waits there (once it opens). */
  reportRedis(sink: ReplicationSink): void {
    this.#sink = sink;
    this.#leases?.replication.report(sink);
  }

  /** The bots whose lease this instance holds now. */
  get held(): string[] {
    return this.#held.bots;
  }

  runsHere(bot: string): boolean {
    return this.#held.runsHere(bot);
  }

  storeFor(bot: string): StateStore {
    let store = this.#stores.get(bot);
    if (!store) {
      store = this.#o.store.fenced({ current: () => this.#held.fenceOf(bot), description: `bot "${bot}"` });
      this.#stores.set(bot, store);
    }
    return store;
  }

  async start(hooks: CoordinatorHooks): Promise<void> {
    this.#hooks = hooks;
    this.#proc = await thisProcess();
    this.#dueAt = this.#now();
    this.#leases = await RedisLeases.open({
      url: this.#o.store.url,
      prefix: this.#o.store.prefix,
      instanceId: this.instanceId,
      proc: this.#proc,
      ttlMs: this.timing.ttlMs,
      log: this.#o.log,
    });
    this.#o.log.info(
      { instance: this.instanceId, leaseTtlMs: this.timing.ttlMs, bots: this.#o.bots.length },
      "cluster mode: bots are shared with the other instances by leases",
    );
    if (this.#sink) this.#leases.replication.report(this.#sink);
    this.#leases.replication.onFailover(() => this.#roundNow(true));
    this.#o.store.replication.onFailover(() => this.#roundNow(true));
    this.#leases.onReady(() => this.#roundNow(false));
    const first = await this.#runRound();
    if (first.length > 0) await hooks.run(first);
  }

  async stop(stopAll: () => Promise<void>): Promise<void> {
    this.#draining = true;
    try {
      await stopAll();
    } finally {
      this.#closed = true;
      clearTimeout(this.#timer);
      await this.#round?.catch(() => {});
      await this.#held.releaseAll(this.#leases, (bot, err) => {
        this.#o.log.warn({ bot, err: errorText(err) }, "could not release a lease; it expires by itself");
      });
      await this.#leases?.close();
    }
  }

  /** One round at a time; the next is scheduled when this one ends (sooner after a failure). */
  #runRound(): Promise<string[]> {
    this.#startedLateMs = Math.max(0, this.#now() - this.#dueAt);
    const round = this.#oneRound().finally(() => {
      this.#round = undefined;
      if (this.#closed) return;
      const delay = this.#reReadDue
        ? 0
        : this.#failing
          ? Math.max(50, this.timing.renewEveryMs / 4)
          : this.timing.renewEveryMs;
      this.#reReadDue = false;
      this.#dueAt = this.#now() + delay;
      this.#timer = setTimeout(() => this.#nextRound(), delay);
    });
    this.#round = round;
    return round;
  }

  #nextRound(): void {
    void this.#runRound().then((bots) => {
      if (bots.length === 0 || !this.#hooks) return;
      this.#hooks.run(bots).catch((err: unknown) => this.#o.log.error({ err, bots }, "could not start bots"));
    });
  }

  /**
   * The bot's start failed here: holding its lease would keep it stopped everywhere, so it is
   * given back. `forNow` (the store was out of reach): a later round takes it again, here or on
   * another instance. Otherwise (its setup threw here, its key was refused here) this instance
   * refuses it, and says so in its heartbeats, until {@link retryHere}: another instance runs it.
   */
  startFailed(bot: string, forNow: boolean): void {
    if (!forNow) this.#refused.add(bot);
    const held = this.#held.drop(bot);
    if (!held) return;
    this.#o.log.warn(
      { bot },
      forNow
        ? "the bot could not start here for now; its lease is given back"
        : "the bot failed to start here; its lease is given back for another instance to run it",
    );
    // Its start failed: the warn line above is all there is to say of its stop.
    this.#halt(bot, held.fence, this.timing.haltDeadlineMs, false, { said: true });
  }

  /** A new version of the bot (a reload): this instance may take it again (see {@link startFailed}). */
  retryHere(bot: string): void {
    this.#refused.delete(bot);
  }

  refuses(bot: string): boolean {
    return this.#refused.has(bot);
  }

  /**
   * A new primary (`failover`), or the lease connection ready again after renewals failed: renew
   * (re-read) the leases held here now, or right after the round under way, not at the next try.
   */
  #roundNow(failover: boolean): void {
    if (this.#closed || (!failover && !this.#failing)) return;
    if (failover)
      this.#o.log.info({ held: this.#held.size }, "redis primary changed; re-reading the leases held here");
    if (this.#round) this.#reReadDue = true;
    else {
      clearTimeout(this.#timer);
      this.#nextRound();
    }
  }

  /** Each bot's lease holder as the last round read it, within a ttl: a standby bot names it. */
  holderOf(bot: string): string | undefined {
    return this.#holders.holderOf(bot);
  }

  /**
   * How long no round read the leases, once longer than a ttl; `late` when no read failed but the
   * rounds ran late: the next one overdue, or the one under way begun late, by more than `ttl/6`
   * (the margin of the timing rule: lateness no scheduling hiccup explains).
   */
  leasesUnread(): LeasesUnread | undefined {
    const forMs = this.#holders.unreadForMs();
    if (forMs === undefined) return undefined;
    const lateMs = this.#round ? this.#startedLateMs : this.#now() - this.#dueAt;
    return { forMs, late: !this.#failing && lateMs > this.timing.haltDeadlineMs };
  }

  /** Why a bot's lease was lost here, until it is taken again (here or elsewhere): `bothost status` says it. */
  lostLease(bot: string): string | undefined {
    return this.#held.lostReason(bot);
  }

  async #oneRound(): Promise<string[]> {
    const leases = this.#leases!;
    let view: ClusterView;
    let gone: string[];
    let takeFrom: Map<string, TakeFrom>;
    try {
      const sentAt = this.#now();
      view = await leases.heartbeat(this.#o.bots, this.#refused);
      // A dead instance of this host: its bots are free to take now, not once its leases expire.
      const dead = await leavingDead(view, { id: this.instanceId, proc: this.#proc });
      takeFrom = dead.takeFrom;
      for (const instance of dead.idle) await leases.forget(instance);
      this.#holders.read(view.holders, sentAt, view.epoch);
      gone = await this.#held.renewAll(leases);
      if (this.#failing) this.#o.log.info("Redis reachable again; leases renewed");
      this.#failing = false;
    } catch (err) {
      this.#failed(err);
      return [];
    }
    // A bot held elsewhere stands by naming its holder: a lease lost here is no reason to show now.
    for (const bot of this.#o.bots)
      if (![undefined, this.instanceId].includes(view.holders.get(bot))) {
        this.#held.forgetLoss(bot);
        this.#hooks?.elsewhere?.(bot);
      }
    const alive = view.instances.length;
    const active = this.#held.active;
    const picture = { self: this.instanceId, ...view };
    const refused = refusalsOf(picture);
    const plan = balance(picture, active, refused);
    this.#noteAlive(alive, plan.share);
    if (this.#draining) return [];
    // Only once the membership has been the same for two rounds: a late heartbeat moves nothing.
    if (plan.handOver && alive === this.#aliveBefore) this.#handOverOne(refused.somewhere);
    const acquired: string[] = [];
    // A lease just found gone (Redis lost its keys) is taken again first: this instance ran the bot.
    for (const bot of [...gone, ...this.#order.filter((b) => !gone.includes(b))]) {
      // A bot another instance refuses is taken past the limit (see balance.ts); one refused here never.
      if ((active + acquired.length >= plan.limit && !refused.somewhere.has(bot)) || this.#refused.has(bot))
        continue;
      // Only bots free in this round's picture (or under this instance's own acquisition that no
      // replica confirmed, taken again with a new token): asking for a held lease is a wasted call.
      const holder = view.holders.get(bot);
      if (
        this.#held.has(bot) ||
        (this.#halting.has(bot) && !gone.includes(bot)) ||
        (holder !== undefined && holder !== this.instanceId) ||
        this.#holders.leftToOthers(bot)
      )
        continue;
      try {
        const stopping = this.#halting.get(bot);
        if (await this.#held.acquire(leases, bot, takeFrom.get(bot), stopping)) acquired.push(bot);
      } catch (err) {
        this.#failed(err);
        break;
      }
    }
    return acquired;
  }

  /** Hand over one bot held here that no instance refuses (`refused`: those some instance does). */
  #handOverOne(refused: ReadonlySet<string>): void {
    if (this.#held.handingOver) return;
    const bot = this.#order.findLast((b) => this.#held.has(b) && !refused.has(b));
    const held = bot === undefined ? undefined : this.#held.get(bot);
    if (bot === undefined || !held) return;
    held.handingOver = true;
    this.#o.log.info({ bot, instances: this.#alive }, "handing the bot over to balance the instances");
    this.#halt(bot, held.fence, this.#o.handoverDeadlineMs, true, {
      before: () => {
        // Still held (renewed while it stopped): give it up for another instance to take.
        this.#held.drop(bot, held);
      },
    });
  }

  /** Stop the bot here (see `haltBot`). */
  #halt(bot: string, fence: Fence, ms: number, elsewhere: boolean, o: HaltNotes = {}): void {
    const parts = { hooks: this.#hooks, log: this.#o.log, halting: this.#halting, leases: this.#leases };
    haltBot({ ...parts, held: (b) => this.#held.has(b) }, { bot, fence, ms, elsewhere }, o);
  }

  #noteAlive(alive: number, share: number): void {
    this.#aliveBefore = this.#alive;
    if (alive !== this.#alive) this.#o.log.info({ instances: alive, share }, "instances alive changed");
    this.#alive = alive;
  }

  #failed(err: unknown): void {
    const fields = { err: errorText(err), validForMs: this.timing.validForMs };
    if (!this.#failing)
      this.#o.log.warn(fields, "cannot reach Redis to renew leases; bots stop here if this lasts");
    this.#failing = true;
  }
}
