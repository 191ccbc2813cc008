/**
 * What a round of leases remembers: once the leases' epoch changes between two readings (Redis
 * lost its keys), the bots another instance held before are left to it for a ttl, then taken as
 * any free bot; this instance's own, and bots nobody held, are never left. An epoch read for the
 * first time (a new cluster, or this instance's first round) leaves nothing.
 */
import { expect, it } from "vitest";
import { LeaseHolders } from "../../src/cluster/lease-holders.ts";

const TTL = 3_000;

it("leaves the bots another instance held to it for a ttl after Redis lost its keys", () => {
  let now = 1_000;
  const holders = new LeaseHolders("me", TTL, () => now);
  const before = new Map([
    ["theirs", "other"],
    ["mine", "me"],
    ["free", undefined],
  ]);
  holders.read(before, now, "e1");
  expect(["theirs", "mine", "free"].map((b) => holders.leftToOthers(b))).toEqual([false, false, false]);
  now += 1_000;
  // Flushed: every lease free, a new epoch.
  holders.read(
    new Map([
      ["theirs", undefined],
      ["mine", undefined],
      ["free", undefined],
    ]),
    now,
    "e2",
  );
  expect(["theirs", "mine", "free"].map((b) => holders.leftToOthers(b))).toEqual([true, false, false]);
  now += TTL - 1;
  holders.read(new Map([["theirs", undefined]]), now, "e2");
  expect(holders.leftToOthers("theirs")).toBe(true);
  now += 1;
  expect(holders.leftToOthers("theirs")).toBe(false);
});

it("leaves nothing at the first reading, nor when the epoch stays (a lease that expired)", () => {
  let now = 1_000;
  const holders = new LeaseHolders("me", TTL, () => now);
  holders.read(new Map([["theirs", "other"]]), now, "e1");
  now += 1_000;
  holders.read(new Map([["theirs", undefined]]), now, "e1");
  expect(holders.leftToOthers("theirs")).toBe(false);
  const fresh = new LeaseHolders("me", TTL, () => now);
  fresh.read(new Map([["theirs", undefined]]), now, "e9");
  expect(fresh.leftToOthers("theirs")).toBe(false);
});
