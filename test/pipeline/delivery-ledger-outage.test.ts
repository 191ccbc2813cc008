/**
 * The ledger over a store whose writes fail for a while, as RedisStore's `set` fails in an outage
 * (the gate refuses it; FileStore's sets only touch memory and a failed commit keeps them): a
 * failed save is written again by the next, and no save says the store took writes that never landed.
 */
import { describe, expect } from "vitest";
import { DeliveryLedger, MARK_KEYS } from "../../src/pipeline/delivery-ledger.ts";
import { gatedBackend, StoreGate } from "../support/gated-store.ts";
import { everyStore, test } from "../support/state.ts";

const implementations = await everyStore("ledger-outage");

describe.each(implementations)("%s", (_name, open) => {
  async function ledgerOn(dir: string) {
    const store = await open(dir, Date.now);
    const gate = new StoreGate();
    const gated = gatedBackend(store, [], gate);
    const ledger = await DeliveryLedger.open(gated);
    await ledger.baseline(0);
    for (const id of [1, 2, 3, 4, 5]) ledger.begin(id);
    return { store, gate, ledger, reopen: () => DeliveryLedger.open(store) };
  }

  test("a failed save is written by the next one: marks and cursor survive a restart", async ({ dir }) => {
    const { store, gate, ledger, reopen } = await ledgerOn(dir);
    ledger.finish(3); // a mark: 1 and 2 are still running
    ledger.finish(1); // the cursor moves to 1
    gate.mode = "fail";
    await expect(ledger.save()).rejects.toMatchObject({ code: "STATE_UNAVAILABLE" });
    gate.open();
    await ledger.save();
    const after = await reopen();
    expect(after.cursor).toBe(1);
    expect([2, 3, 4].map((id) => after.isDuplicate(id))).toEqual([false, true, false]);
    await store.close();
  });

  test("a mark written whose reply was lost is deleted once the cursor passes it", async ({ dir }) => {
    const { store, gate, ledger, reopen } = await ledgerOn(dir);
    ledger.finish(3);
    gate.mode = "lose"; // the mark's slot lands, its reply is lost
    await expect(ledger.save()).rejects.toMatchObject({ code: "STATE_UNAVAILABLE" });
    ledger.finish(4);
    await ledger.save();
    const reopened = await reopen();
    expect([2, 3, 4].map((id) => reopened.isDuplicate(id))).toEqual([false, true, true]);
    for (const id of [1, 2, 5]) ledger.finish(id);
    await ledger.save();
    expect((await store.getMany(MARK_KEYS)).filter((value) => value !== undefined)).toEqual([]);
    expect((await reopen()).cursor).toBe(5);
    await store.close();
  });

  test("a save begun while another's writes are in flight settles only after them", async ({ dir }) => {
    const { store, gate, ledger } = await ledgerOn(dir);
    ledger.finish(1);
    gate.mode = "hang";
    const settled: string[] = [];
    const first = ledger.save().then(() => settled.push("first"));
    await gate.stoppedAt(1);
    const second = ledger.save().then(() => settled.push("second")); // nothing left to write
    gate.open();
    await Promise.all([first, second]);
    expect(settled).toEqual(["first", "second"]);
    await store.close();
  });
});
