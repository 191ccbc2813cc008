/**
 * Instances of this host whose process is gone. Each instance says in its heartbeats which process
 * it is: the host's boot, its pid namespace, its user, its pid and that pid's start
 * (proc-identity.ts). An instance that finds another of the same boot, namespace and user (whose
 * processes it sees in /proc whatever its mount options) whose pid is no longer that process
 * (none, a later one that got the pid, or a zombie its parent has not reaped) knows it died: a
 * kill -9, an out-of-memory kill, a crash.
 * Its leases need not wait for their ttl: they are taken at once, with a new fencing token, and
 * the dead instance leaves the live set. A service manager restarting a killed daemon on Redis
 * so runs its bots again as soon as it is up. Any other holder (another host, another container,
 * a live process however stuck) keeps its lease until it expires, as before.
 */
import { stat } from "node:fs/promises";
import { bootId, isZombie, pidNamespace, startTicks } from "../state/proc-identity.ts";
import type { ClusterView } from "./redis-leases.ts";

/** This process, as its heartbeats say it (`boot|namespace|uid|pid|start`); undefined where /proc does not say. */
export async function thisProcess(): Promise<string | undefined> {
  const [boot, ns, ticks] = await Promise.all([bootId(), pidNamespace(), startTicks(process.pid)]);
  const uid = process.getuid?.();
  if (boot === undefined || ns === undefined || ticks === undefined || uid === undefined) return undefined;
  return [boot, ns, uid, process.pid, ticks].join("|");
}

/** Whether `proc` (as {@link thisProcess} says one) is a process of `self`'s host and namespace that is gone. */
export async function goneHere(proc: string, self: string): Promise<boolean> {
  const [boot, ns, uid, pid, ticks] = proc.split("|");
  const [ownBoot, ownNs, ownUid] = self.split("|");
  if (boot !== ownBoot || ns !== ownNs || uid !== ownUid || pid === undefined || ticks === undefined)
    return false;
  const id = Number(pid);
  if (!Number.isSafeInteger(id) || id <= 0) return false;
  const now = await startTicks(id);
  // Unread: gone only if /proc has no such process. A read can fail otherwise (this process out of
  // file descriptors), while a stat needs none.
  if (now === undefined)
    return (await stat(`/proc/${id}`).catch((err: NodeJS.ErrnoException) => err.code)) === "ENOENT";
  // A zombie (killed, not yet reaped: its parent never waits, or has not yet) still has its /proc
  // entry and start, yet renews nothing.
  return now !== Number(ticks) || (await isZombie(id));
}

/**
 * The live instances of `procs` (by instance id, as the heartbeat read them), other than `self`,
 * whose process is gone from this host.
 */
export async function deadInstances(
  instances: readonly string[],
  procs: ReadonlyMap<string, string>,
  self: { id: string; proc: string | undefined },
): Promise<Set<string>> {
  const dead = new Set<string>();
  if (self.proc === undefined) return dead;
  for (const instance of instances) {
    const proc = procs.get(instance);
    if (instance !== self.id && proc !== undefined && (await goneHere(proc, self.proc))) dead.add(instance);
  }
  return dead;
}

/** A bot's lease to take from a dead instance: the lease's value as read, and that instance. */
export interface TakeFrom {
  seen: string;
  dead: string;
}

/**
 * Leaves out of `view` the instances of this host whose process is gone: they are not counted
 * live, and their bots show free. Resolves what to take each such bot's lease from, and the dead
 * instances that held no lease (for the caller to drop from the live set).
 */
export async function leavingDead(
  view: ClusterView,
  self: { id: string; proc: string | undefined },
): Promise<{ takeFrom: Map<string, TakeFrom>; idle: string[] }> {
  const takeFrom = new Map<string, TakeFrom>();
  const dead = await deadInstances(view.instances, view.procs, self);
  if (dead.size === 0) return { takeFrom, idle: [] };
  view.instances = view.instances.filter((instance) => !dead.has(instance));
  const holding = new Set<string>();
  for (const [bot, holder] of view.holders) {
    const seen = view.values.get(bot);
    if (holder === undefined || !dead.has(holder) || seen === undefined) continue;
    takeFrom.set(bot, { seen, dead: holder });
    view.holders.set(bot, undefined);
    holding.add(holder);
  }
  return { takeFrom, idle: [...dead].filter((instance) => !holding.has(instance)) };
}
