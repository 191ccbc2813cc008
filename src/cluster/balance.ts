/**
 * How many bots an instance of a cluster runs, decided each round from one picture of Redis: the
 * live instances and who holds each bot's lease. The aim is a fair split, every instance within
 * one bot of every other (4 bots on 3 instances: 2 + 1 + 1, never 2 + 2 + 0):
 *
 * - no instance runs more than `ceil(bots / instances)` (its share);
 * - every instance is owed at least `floor(bots / instances)`; free bots go first to instances
 *   below that, and an instance already at it takes a free bot only when there are more free
 *   bots than the instances below it are owed;
 * - when the free bots do not cover what is owed, one instance gives a bot up: the one running
 *   the most (the smallest id among equals), so that every instance, seeing the same picture,
 *   agrees on which one.
 *
 * A bot that failed to start on an instance is refused there (see `refusalsOf`): refused by every
 * live instance it counts for none; refused by some, it is never handed over (the one taking it
 * could be one that refused it), and any instance that did not refuse it takes it when free, past
 * its limit if need be, and hands over a bot that anyone can run instead.
 */

export interface ClusterPicture {
  /** This instance's id. */
  self: string;
  /** The live instances' ids, this one among them. */
  instances: readonly string[];
  /** Each bot's lease holder (an instance id), or undefined when the bot is free. */
  holders: ReadonlyMap<string, string | undefined>;
  /** The bots each live instance refuses (they failed to start there); none when absent. */
  refusals?: ReadonlyMap<string, ReadonlySet<string>>;
}

export interface Refusals {
  /** Refused by every live instance: it runs nowhere, and counts for no instance's share. */
  nowhere: ReadonlySet<string>;
  /** Refused by at least one live instance (the bots in `nowhere` too). */
  somewhere: ReadonlySet<string>;
}

export function refusalsOf(picture: ClusterPicture): Refusals {
  const nowhere = new Set<string>();
  const somewhere = new Set<string>();
  const refusals = picture.refusals ?? new Map<string, ReadonlySet<string>>();
  for (const bot of picture.holders.keys()) {
    const by = picture.instances.filter((id) => refusals.get(id)?.has(bot)).length;
    if (by > 0) somewhere.add(bot);
    if (by > 0 && by === picture.instances.length) nowhere.add(bot);
  }
  return { nowhere, somewhere };
}

export interface BalanceDecision {
  /** `ceil(bots / instances)`: the most any instance runs once settled. */
  share: number;
  /** How many bots this instance may run now: it takes free bots up to this many. */
  limit: number;
  /** Give one bot up (stop it, then release its lease) for an instance that has too few. */
  handOver: boolean;
}

/**
 * What this instance does this round, given the picture and `running`, the bots it runs and keeps
 * (those being handed over are not counted); `refused`, the picture's refusals when the caller
 * has them already.
 */
export function balance(
  picture: ClusterPicture,
  running: number,
  refused: Refusals = refusalsOf(picture),
): BalanceDecision {
  const { nowhere, somewhere } = refused;
  const instances = Math.max(1, picture.instances.length);
  const counts = new Map<string, number>(picture.instances.map((id) => [id, 0]));
  // Instances holding a bot anyone can run: only those can give one up.
  const movable = new Set<string>();
  let bots = 0;
  let free = 0;
  for (const [bot, holder] of picture.holders) {
    if (holder === undefined && nowhere.has(bot)) continue;
    bots++;
    if (holder === undefined) free++;
    // A lease of an instance no longer alive is neither free nor anyone's share: it expires.
    else if (counts.has(holder)) {
      counts.set(holder, counts.get(holder)! + 1);
      if (!somewhere.has(bot)) movable.add(holder);
    }
  }
  const share = Math.ceil(bots / instances);
  const owedEach = Math.floor(bots / instances);
  let owed = 0;
  for (const count of counts.values()) owed += Math.max(0, owedEach - count);

  const limit = free > owed ? share : owedEach;
  const giver = mostLoaded(new Map([...counts].filter(([id]) => movable.has(id))));
  const handOver =
    running > share || (owed > free && giver === picture.self && (counts.get(picture.self) ?? 0) > owedEach);
  return { share, limit, handOver };
}

/** The instance running the most bots; the smallest id among equals. */
function mostLoaded(counts: ReadonlyMap<string, number>): string | undefined {
  let best: [string, number] | undefined;
  for (const [id, count] of counts) {
    if (!best || count > best[1] || (count === best[1] && id < best[0])) best = [id, count];
  }
  return best?.[0];
}
