/**
 * Two runs of one event on one store (two instances running one dialog's answer, as during a
 * rolling deploy): the second waits on the first's claim of an effect. A send held by the
 * account's budget takes as long as it takes; its claim is renewed meanwhile, so the second run
 * takes its result and sends nothing. A claim nobody renews (its process gone) is looked for
 * after CLAIM_WAIT_MS, not before.
 */
import { describe, expect, it } from "vitest";
import { CLAIM_RENEW_MS, CLAIM_WAIT_MS, type EffectRecord } from "../../src/effects/effect-claims.ts";
import { EffectRecords } from "../../src/effects/effect-records.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";
import { deferred } from "../support/deferred.ts";
import { ManualClock } from "../support/manual-clock.ts";

const KEY = "m:42";

function setup() {
  const clock = new ManualClock(1_700_000_000_000);
  const store = new MemoryStore().namespace("bot").namespace("effects");
  // Both instances' bots started before either run began (since: 0).
  const instance = () => new EffectRecords(store, { ttlMs: 3_600_000, clock, since: () => 0 });
  const sent: string[] = [];
  const verified: string[] = [];
  /** A send that counts itself; the server shows no such message (a read-back finds nothing). */
  const send = (who: string, held?: Promise<void>) => ({
    act: async () => {
      sent.push(who);
      await held;
      return { id: sent.length };
    },
    verify: async () => {
      verified.push(who);
      return undefined;
    },
  });
  return { clock, store, instance, sent, verified, send };
}

describe("an effect's claim", () => {
  it("is renewed while its send waits: another run of the event waits as long, and takes its result", async () => {
    const { clock, store, instance, sent, verified, send } = setup();
    const budget = deferred();
    const first = instance().run(KEY, false).once("send", send("first", budget.promise));
    await clock.tick(0);
    expect(sent).toEqual(["first"]);
    const second = instance().run(KEY, true).once("send", send("second"));
    // The first send waits three times CLAIM_WAIT_MS for the account's budget.
    await clock.tick(3 * CLAIM_WAIT_MS);
    const claim = (await store.get(`${KEY}#1`)) as unknown as EffectRecord;
    expect(claim.pending).toBe(true);
    expect(clock.now() - claim.at!).toBeLessThanOrEqual(CLAIM_RENEW_MS);
    budget.resolve();
    await clock.tick(1_000);
    expect(await first).toEqual({ id: 1 });
    expect(await second).toEqual({ id: 1 });
    expect(sent).toEqual(["first"]);
    expect(verified).toEqual([]);
  });

  it("nobody renews is looked for once CLAIM_WAIT_MS passed, and made when not found", async () => {
    const { clock, store, instance, sent, verified, send } = setup();
    // Left by a process that died mid-send, after both instances started.
    const gone: EffectRecord = {
      n: 1,
      kind: "send",
      result: null,
      pending: true,
      by: "gone",
      at: clock.now(),
    };
    await store.set(`${KEY}#1`, gone as never);
    const second = instance().run(KEY, true).once("send", send("second"));
    await clock.tick(CLAIM_WAIT_MS - 500);
    expect(verified).toEqual([]);
    expect(sent).toEqual([]);
    await clock.tick(1_000);
    expect(await second).toEqual({ id: 1 });
    expect(verified).toEqual(["second"]);
    expect(sent).toEqual(["second"]);
  });

  it("is left for a look by the next run when its send fails, and renewed no more", async () => {
    const { clock, store, instance } = setup();
    const budget = deferred();
    const failing = instance()
      .run(KEY, false)
      .once("send", {
        act: async () => {
          await budget.promise;
          throw new Error("502 from a proxy");
        },
        verify: async () => undefined,
      });
    const outcome = failing.then(
      () => "sent",
      (err: Error) => err.message,
    );
    await clock.tick(CLAIM_RENEW_MS + 100);
    budget.resolve();
    expect(await outcome).toBe("502 from a proxy");
    const left = (await store.get(`${KEY}#1`)) as unknown as EffectRecord;
    expect(left).toEqual({ n: 1, kind: "send", result: null, pending: true });
    await clock.tick(2 * CLAIM_RENEW_MS);
    expect(await store.get(`${KEY}#1`)).toEqual(left);
    expect(clock.pendingTimers).toBe(0);
  });
});
