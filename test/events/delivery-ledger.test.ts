/** The ledger's cursor (low-water mark) and marks, with ids begun in order and out of order. */
import { describe, expect, it } from "vitest";
import { DeliveryLedger } from "../../src/events/delivery-ledger.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";

async function ledgerAt(cursor: number) {
  const store = new MemoryStore();
  const ledger = await DeliveryLedger.open(store);
  await ledger.baseline(cursor);
  const marks = async () => (await store.list("handled:")).map((e) => e.key).sort();
  return { ledger, store, marks };
}

describe("DeliveryLedger", () => {
  it("advances the cursor only past messages whose handlers all finished (begun in order)", async () => {
    const { ledger, store, marks } = await ledgerAt(0);
    for (const id of [1, 2, 3, 4, 5]) ledger.begin(id);
    await ledger.finish(3);
    expect(ledger.cursor).toBe(0);
    expect(await marks()).toEqual(["handled:3"]);
    await ledger.finish(1);
    expect(ledger.cursor).toBe(1);
    await ledger.finish(2);
    expect(ledger.cursor).toBe(3);
    expect(await marks()).toEqual([]);
    await ledger.finish(5);
    expect(ledger.cursor).toBe(3);
    expect(ledger.isDuplicate(5)).toBe(true);
    expect(ledger.isDuplicate(4)).toBe(true); // in flight
    await ledger.finish(4);
    expect(ledger.cursor).toBe(5);
    expect(await store.get("cursor")).toBe(5);
    expect(ledger.isDuplicate(6)).toBe(false);
  });

  it("keeps the cursor below the lowest message in flight when ids were begun out of order", async () => {
    const { ledger, marks } = await ledgerAt(5);
    ledger.begin(10);
    ledger.begin(12);
    ledger.begin(7);
    await ledger.finish(12);
    expect(ledger.cursor).toBe(6);
    expect(await marks()).toEqual(["handled:12"]);
    await ledger.finish(10);
    expect(ledger.cursor).toBe(6);
    await ledger.finish(7);
    expect(ledger.cursor).toBe(12);
    expect(await marks()).toEqual([]);
    // Once nothing is in flight, in-order tracking starts afresh.
    ledger.begin(20);
    ledger.begin(21);
    await ledger.finish(21);
    expect(ledger.cursor).toBe(19);
    await ledger.finish(20);
    expect(ledger.cursor).toBe(21);
  });
});
