/**
 * A replicated Redis of the test's own: a primary, two replicas and three Sentinels, each a
 * `redis-server` on a free loopback port, with short Sentinel timings so a failover takes a couple
 * of seconds. Faults act on whichever node is the primary at the time.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { expect } from "vitest";
import { freePort } from "./cluster.ts";

export const MASTER_NAME = "bothost-test";
/**
 * Every redis-server these helpers started, killed when the test process exits: a test cut off
 * by its timeout while a topology was starting leaves none running.
 */
const children = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of children) child.kill("SIGKILL");
});
function spawned(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

/** Sentinel's `down-after-milliseconds`: how long a silent primary takes to be judged down. */
export const DOWN_AFTER_MS = 1_000;

interface Node {
  port: number;
  child: ChildProcess;
}

export interface SentinelTopology {
  /** `host:port` of each Sentinel. */
  sentinels: string[];
  /** The port of the primary the Sentinels name now. */
  primaryPort(): Promise<number>;
  /**
   * Run `SENTINEL FAILOVER` once both replicas are online (`asking` is called just before) and
   * resolve once the Sentinels name another primary.
   */
  failover(asking?: () => void): Promise<{ from: number; to: number }>;
  /** SIGKILL the primary and resolve once the Sentinels promoted a replica; the old one stays dead. */
  killPrimary(): Promise<{ from: number; to: number }>;
  /**
   * Once both replicas are online, SIGSTOP the primary (`stopping` is called just before) for
   * `ms`, then SIGCONT it; resolves once it is an online replica again.
   */
  freezePrimary(ms: number, stopping?: () => void): Promise<{ from: number; to: number }>;
  /** Start a killed node again on its port, as a replica of the current primary. */
  revive(port: number): Promise<void>;
  /** The replicas the primary reports connected. */
  connectedReplicas(): Promise<number>;
  /** The ports of the live data nodes other than the primary. */
  replicaPorts(): Promise<number[]>;
  /** Send a data node a signal (SIGSTOP, SIGCONT…). */
  signal(port: number, sig: NodeJS.Signals): void;
  /**
   * The Sentinels' own failover time for the first failover they began at or after `since`
   * (`performance.now()`): from its `+try-failover` to its `+failover-end` (which comes once every
   * replica is reconfigured, or at `failover-timeout`); undefined while none has ended.
   */
  failoverMs(since: number): number | undefined;
  stop(): Promise<void>;
}

export async function startSentinelTopology(): Promise<SentinelTopology> {
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-sentinel-"));
  const nodes = new Map<number, Node>();
  const sentinelNodes: Node[] = [];
  // A full resync starts at once rather than after Redis's default 5 s, which only lets several
  // replicas share one transfer (docs/operations/instances.md recommends it for bothost's small
  // data set). BOTHOST_SENTINEL_SYNC_DELAY=5 measures Redis's default instead.
  const syncDelay = ["--repl-diskless-sync-delay", process.env.BOTHOST_SENTINEL_SYNC_DELAY ?? "0"];
  const launchData = (port: number, replicaOf?: number) => launchNode(dir, nodes, port, replicaOf, syncDelay);
  const [p0, p1, p2] = [await freePort(), await freePort(), await freePort()];
  await launchData(p0);
  await launchData(p1, p0);
  await launchData(p2, p0);
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    const file = path.join(dir, `sentinel-${port}.conf`);
    await writeFile(
      file,
      [
        `port ${port}`,
        "bind 127.0.0.1",
        `dir ${dir}`,
        `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${p0} 2`,
        `sentinel down-after-milliseconds ${MASTER_NAME} ${DOWN_AFTER_MS}`,
        `sentinel failover-timeout ${MASTER_NAME} 4000`,
        `sentinel parallel-syncs ${MASTER_NAME} 2`,
        "",
      ].join("\n"),
    );
    const child = spawned(spawn("redis-server", [file, "--sentinel"], { cwd: dir, stdio: "ignore" }));
    sentinelNodes.push({ port, child });
    await expect.poll(() => answers(port), { timeout: 10_000, interval: 50 }).toBe(true);
  }
  /** The primary every Sentinel agrees on (undefined while they disagree or cannot say). */
  const agreed = async (): Promise<number | undefined> => {
    const named = await Promise.all(
      sentinelNodes.map((s) =>
        ask(s.port, (c) => c.call("SENTINEL", "get-master-addr-by-name", MASTER_NAME) as Promise<string[]>)
          .then((addr) => Number(addr[1]))
          .catch(() => undefined),
      ),
    );
    return named.every((p) => p === named[0]) ? named[0] : undefined;
  };
  const primaryPort = async () => {
    const port = await agreed();
    if (port === undefined) throw new Error("the Sentinels do not agree on a primary");
    return port;
  };
  const role = (port: number) =>
    ask(port, async (c) => ((await c.call("ROLE")) as [string])[0]).catch(() => "unreachable");
  /** Resolves once every Sentinel names a primary other than `from`, and it says it is one. */
  const promoted = async (from: number) => {
    let to = 0;
    await expect
      .poll(
        async () => {
          const port = await agreed();
          if (port === undefined || port === from) return false;
          to = port;
          return (await role(port)) === "master";
        },
        { timeout: 30_000, interval: 100 },
      )
      .toBe(true);
    return { from, to };
  };
  // Ready when the replicas are in sync and every Sentinel knows them and the other Sentinels
  // (needed to agree on a failover).
  await expect.poll(() => onlineReplicasOf(p0), { timeout: 30_000, interval: 100 }).toBe(2);
  await expect
    .poll(
      () =>
        Promise.all(
          sentinelNodes.map((s) =>
            ask(s.port, (c) => c.call("SENTINEL", "MASTER", MASTER_NAME) as Promise<string[]>)
              .then((fields) => {
                const at = (k: string) => fields[fields.indexOf(k) + 1];
                return at("num-slaves") === "2" && at("num-other-sentinels") === "2";
              })
              .catch(() => false),
          ),
        ).then((ok) => ok.every(Boolean)),
      { timeout: 20_000, interval: 200 },
    )
    .toBe(true);
  /**
   * Resolves once the primary the Sentinels name (asked again each time: they may have replaced
   * it meanwhile) has both other data nodes online as replicas, and every Sentinel sees both as
   * up: a replica revived a moment ago is still flagged down by the Sentinels for a while, and a
   * failover then leaves it out, pointed at the old primary until their next check (10 s later).
   */
  const settled = async () => {
    await expect
      .poll(async () => onlineReplicasOf(await primaryPort().catch(() => 0)), {
        timeout: 30_000,
        interval: 100,
      })
      .toBe(2);
    await expect
      .poll(
        () =>
          Promise.all(
            sentinelNodes.map((s) =>
              ask(s.port, (c) => c.call("SENTINEL", "REPLICAS", MASTER_NAME) as Promise<string[][]>)
                .then(
                  (replicas) =>
                    replicas.filter((fields) => fields[fields.indexOf("flags") + 1] === "slave").length,
                )
                .catch(() => 0),
            ),
          ).then((up) => up.every((n) => n === 2)),
        { timeout: 30_000, interval: 100 },
      )
      .toBe(true);
  };
  // The Sentinels' failover events, from each of them (only the leader of a failover publishes
  // its progress), with when they came.
  const events: { name: string; at: number }[] = [];
  const listeners = await Promise.all(
    sentinelNodes.map(async (s) => {
      const sub = new Redis({ port: s.port, host: "127.0.0.1", maxRetriesPerRequest: 0 });
      sub.on("error", () => {});
      sub.on("message", (channel: string) => events.push({ name: channel, at: performance.now() }));
      await sub.subscribe("+try-failover", "+failover-end");
      return sub;
    }),
  );
  const signal = (port: number, sig: NodeJS.Signals) => {
    nodes.get(port)?.child.kill(sig);
  };
  return {
    sentinels: sentinelNodes.map((s) => `127.0.0.1:${s.port}`),
    primaryPort,
    failover: async (asking) => {
      // The replicas must have caught up, or Sentinel refuses ("no good slave").
      await settled();
      const from = await primaryPort();
      asking?.();
      // A Sentinel still finishing the previous failover (reconfiguring its replicas) says INPROG.
      await expect
        .poll(
          () =>
            ask(sentinelNodes[0]!.port, (c) => c.call("SENTINEL", "FAILOVER", MASTER_NAME)).then(
              () => true,
              (err: Error) => (/INPROG/.test(err.message) ? false : Promise.reject(err)),
            ),
          { timeout: 20_000, interval: 200 },
        )
        .toBe(true);
      return promoted(from);
    },
    killPrimary: async () => {
      const from = await primaryPort();
      const node = nodes.get(from)!;
      const exited = new Promise((resolve) => node.child.once("exit", resolve));
      signal(from, "SIGKILL");
      await exited;
      return promoted(from);
    },
    freezePrimary: async (ms, stopping) => {
      // As before every fault: the previous one settled (a demoted primary still resyncing would
      // be the new primary's only other node, and its full resync part of this fault's delay).
      await settled();
      const from = await primaryPort();
      stopping?.();
      signal(from, "SIGSTOP");
      await new Promise((resolve) => setTimeout(resolve, ms));
      signal(from, "SIGCONT");
      const result = await promoted(from);
      await expect.poll(() => role(from), { timeout: 30_000, interval: 100 }).toBe("slave");
      // Demoted is not caught up: until it has resynced, a failover could promote it without
      // the writes made since (Redis's replication is asynchronous), which no client can prevent.
      await settled();
      return result;
    },
    revive: async (port) => launchData(port, await primaryPort()),
    connectedReplicas: async () => onlineReplicasOf(await primaryPort()),
    replicaPorts: async () => {
      const primary = await primaryPort();
      return [...nodes.values()]
        .filter((n) => n.port !== primary && n.child.exitCode === null && n.child.signalCode === null)
        .map((n) => n.port);
    },
    signal,
    failoverMs: (since) => {
      const tried = events.find((e) => e.name === "+try-failover" && e.at >= since);
      const ended = tried && events.find((e) => e.name === "+failover-end" && e.at >= tried.at);
      return ended && ended.at - tried.at;
    },
    stop: async () => {
      for (const sub of listeners) sub.disconnect();
      await Promise.all([...sentinelNodes, ...nodes.values()].map(({ child }) => halt(child)));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Start a data node on `port` (a replica of `replicaOf` if given) and resolve once it answers. */
async function launchNode(
  dir: string,
  nodes: Map<number, Node>,
  port: number,
  replicaOf?: number,
  extra: readonly string[] = [],
) {
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", ...extra];
  args.push("--dir", dir, "--dbfilename", `dump-${port}.rdb`, "--daemonize", "no");
  if (replicaOf !== undefined) args.push("--replicaof", "127.0.0.1", String(replicaOf));
  const child = spawned(spawn("redis-server", args, { cwd: dir, stdio: "ignore" }));
  nodes.set(port, { port, child });
  await expect.poll(() => answers(port), { timeout: 10_000, interval: 50 }).toBe(true);
}

/** A primary with replicas and no Sentinel watching them (a group other than a topology's). */
export interface ReplicatedRedis {
  primary: number;
  replicas: number[];
  /** SIGKILL a node. */
  kill(port: number): void;
  /** Send a node a signal (SIGSTOP, SIGCONT…). */
  signal(port: number, sig: NodeJS.Signals): void;
  stop(): Promise<void>;
}

/** A primary and `count` replicas, resolved once every replica is online. */
export async function startReplicatedRedis(count: number): Promise<ReplicatedRedis> {
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-replicated-"));
  const nodes = new Map<number, Node>();
  const primary = await freePort();
  await launchNode(dir, nodes, primary);
  const replicas: number[] = [];
  for (let i = 0; i < count; i++) {
    const port = await freePort();
    await launchNode(dir, nodes, port, primary);
    replicas.push(port);
  }
  await expect.poll(() => onlineReplicasOf(primary), { timeout: 20_000, interval: 100 }).toBe(count);
  return {
    primary,
    replicas,
    kill: (port) => nodes.get(port)?.child.kill("SIGKILL"),
    signal: (port, sig) => nodes.get(port)?.child.kill(sig),
    stop: async () => {
      await Promise.all([...nodes.values()].map(({ child }) => halt(child)));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** SIGKILL (after SIGCONT, for a stopped one) a process, resolved once it exited. */
async function halt(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGCONT");
  child.kill("SIGKILL");
  await exited;
}

/** `run` on a connection of its own to the node on `port`; rejects when it cannot be asked. */
async function ask<T>(port: number, run: (c: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({ port, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 0 });
  client.on("error", () => {});
  try {
    await client.connect();
    return await run(client);
  } finally {
    client.disconnect();
  }
}

/** `INFO replication` of the node on `port` (undefined when it cannot be asked). */
const replicationOf = (port: number): Promise<string | undefined> =>
  ask(port, (c) => c.info("replication")).catch(() => undefined);

/** The replicas the node on `port` reports online (0 when it cannot be asked). */
export async function onlineReplicasOf(port: number): Promise<number> {
  const info = await replicationOf(port);
  return info?.split("\n").filter((l) => /^slave\d+:.*state=online/.test(l)).length ?? 0;
}

/**
 * Whether every replica the node on `port` reports online has acknowledged all it was sent (its
 * offset is the primary's): one that came online a moment ago may not yet answer a `WAIT` in time.
 */
export async function replicasInStep(port: number): Promise<boolean> {
  const info = (await replicationOf(port)) ?? "";
  const own = /^master_repl_offset:(\d+)/m.exec(info)?.[1];
  const offsets = [...info.matchAll(/^slave\d+:.*state=online,offset=(\d+)/gm)].map((m) => m[1]);
  return own !== undefined && offsets.every((offset) => offset === own);
}

function answers(port: number): Promise<boolean> {
  return ask(port, (c) => c.ping()).then(
    (r) => r === "PONG",
    () => false,
  );
}
