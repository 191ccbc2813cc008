/**
 * The fair split of bots between instances, decided from one picture of Redis (who is alive, who
 * holds which lease). LeaseCoordinator runs it against a real Redis in lease-coordinator.test.ts.
 */
import { describe, expect, it } from "vitest";
import { balance, refusalsOf } from "../../src/cluster/balance.ts";

/** A picture seen by `self`: `held` maps each instance to how many of the bots it holds. */
function picture(self: string, held: Record<string, number>, bots: number, dead = 0) {
  const holders = new Map<string, string | undefined>();
  let n = 0;
  for (const [id, count] of Object.entries(held)) {
    for (let i = 0; i < count; i++) holders.set(`bot${n++}`, id);
  }
  for (let i = 0; i < dead; i++) holders.set(`bot${n++}`, "gone");
  while (n < bots) holders.set(`bot${n++}`, undefined);
  return { self, instances: Object.keys(held), holders };
}

describe("balance", () => {
  it("2 + 2 + 0: the more loaded instance with the smaller id gives one bot up, the other keeps its two", () => {
    const held = { a: 2, b: 2, c: 0 };
    expect(balance(picture("a", held, 4), 2)).toEqual({ share: 2, limit: 1, handOver: true });
    expect(balance(picture("b", held, 4), 2)).toEqual({ share: 2, limit: 1, handOver: false });
    expect(balance(picture("c", held, 4), 0)).toEqual({ share: 2, limit: 1, handOver: false });
  });

  it("a released bot goes to the instance below its share, not back to the one that gave it up", () => {
    const held = { a: 1, b: 2, c: 0 };
    expect(balance(picture("a", held, 4), 1)).toMatchObject({ limit: 1, handOver: false });
    expect(balance(picture("b", held, 4), 2)).toMatchObject({ limit: 1, handOver: false });
    expect(balance(picture("c", held, 4), 0)).toMatchObject({ limit: 1, handOver: false });
  });

  it("free bots beyond what is owed may be taken up to the share", () => {
    expect(balance(picture("a", { a: 0, b: 0, c: 0 }, 4), 0)).toEqual({
      share: 2,
      limit: 2,
      handOver: false,
    });
    expect(balance(picture("b", { a: 2, b: 0, c: 0 }, 4), 0)).toEqual({
      share: 2,
      limit: 1,
      handOver: false,
    });
    expect(balance(picture("b", { a: 1, b: 1, c: 1 }, 4), 1)).toEqual({
      share: 2,
      limit: 2,
      handOver: false,
    });
  });

  it("an instance above the share hands over whatever the others hold", () => {
    expect(balance(picture("a", { a: 4, b: 0 }, 4), 4)).toEqual({ share: 2, limit: 2, handOver: true });
    expect(balance(picture("a", { a: 2, b: 0, c: 0 }, 2), 2)).toEqual({ share: 1, limit: 0, handOver: true });
  });

  it("a dead instance's leases are neither free nor anyone's until they expire", () => {
    expect(balance(picture("a", { a: 2, b: 0 }, 4, 2), 2)).toEqual({ share: 2, limit: 2, handOver: false });
    expect(balance(picture("b", { a: 2, b: 0 }, 4, 2), 0)).toEqual({ share: 2, limit: 2, handOver: false });
  });

  it("a lone instance runs every bot; with no bots nothing moves", () => {
    expect(balance(picture("a", { a: 0 }, 3), 0)).toEqual({ share: 3, limit: 3, handOver: false });
    expect(balance(picture("a", { a: 0 }, 0), 0)).toEqual({ share: 0, limit: 0, handOver: false });
  });

  describe("bots refused by an instance (they failed to start there)", () => {
    /** `picture` with `refusals`: each instance's refused bots. */
    const refusing = (p: ReturnType<typeof picture>, refusals: Record<string, string[]>) => ({
      ...p,
      refusals: new Map(Object.entries(refusals).map(([id, bots]) => [id, new Set(bots)])),
    });

    it("a bot refused by every live instance counts for none; one refused by some is known as such", () => {
      const p = refusing(picture("a", { a: 0, b: 0 }, 3), {
        a: ["bot0"],
        b: ["bot0", "bot1"],
        gone: ["bot2"],
      });
      expect(refusalsOf(p)).toEqual({ nowhere: new Set(["bot0"]), somewhere: new Set(["bot0", "bot1"]) });
      // Two bots to share, not three: one each, none taken past that.
      expect(balance(p, 0)).toEqual({ share: 1, limit: 1, handOver: false });
    });

    it("an instance holding only bots others refuse is not the one to give a bot up", () => {
      // a holds two (bot0, bot1), b holds two (bot2, bot3), c none: a would be the giver, but c
      // refuses both of a's bots, so b, holding bots anyone can run, gives one up.
      const p = picture("a", { a: 2, b: 2, c: 0 }, 4);
      const refused = { c: ["bot0", "bot1"] };
      expect(balance(refusing(p, refused), 2).handOver).toBe(false);
      expect(balance(refusing({ ...p, self: "b" }, refused), 2).handOver).toBe(true);
      expect(balance({ ...p, self: "b" }, 2).handOver).toBe(false);
    });
  });
});
