/** The webhook-mode ledger: handled ids kept whatever order they come in, bounded by a floor. */
import { describe, expect, it } from "vitest";
import { MARK_KEYS } from "../../src/pipeline/delivery-ledger.ts";
import { BELOW_FLOOR_LINE, KEEP, WebhookLedger } from "../../src/pipeline/webhook-ledger.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";
import { recordingLogger } from "../support/pipeline.ts";

function handle(ledger: WebhookLedger, id: number): boolean {
  if (ledger.isDuplicate(id)) return false;
  ledger.begin(id);
  ledger.finish(id);
  return true;
}

/** How many ids the store holds under the mark keys (runs expanded). */
async function storedIds(store: MemoryStore): Promise<number> {
  let count = 0;
  for (const value of await store.getMany(MARK_KEYS)) {
    if (typeof value !== "string" || value === "") continue;
    for (const run of value.split(",")) {
      const [from, to = from] = run.split("-").map(Number) as [number, number?];
      count += to - from + 1;
    }
  }
  return count;
}

describe("WebhookLedger", () => {
  it("handles an id that comes after a higher one finished; drops what it handled or runs", async () => {
    const ledger = await WebhookLedger.open(new MemoryStore());
    expect(handle(ledger, 20)).toBe(true);
    await ledger.save();
    expect(ledger.isDuplicate(10)).toBe(false);
    ledger.begin(10);
    expect(ledger.isDuplicate(10)).toBe(true); // in flight
    ledger.finish(10);
    expect(ledger.isDuplicate(10)).toBe(true);
    expect(ledger.isDuplicate(20)).toBe(true);
    expect(ledger.isDuplicate(15)).toBe(false);
    expect(ledger.cursor).toBeUndefined(); // nothing let go of
  });

  it("keeps what it handled through a restart (a new ledger on the same store)", async () => {
    const store = new MemoryStore();
    const before = await WebhookLedger.open(store);
    for (const id of [30, 10, 20]) {
      handle(before, id);
      await before.save();
    }
    const after = await WebhookLedger.open(store);
    for (const id of [10, 20, 30]) expect(after.isDuplicate(id)).toBe(true);
    expect(handle(after, 15)).toBe(true);
    expect(handle(after, 31)).toBe(true);
  });

  it(`keeps the last ${KEEP} ids: older deliveries are dropped at the floor, and the store stays bounded`, async () => {
    const store = new MemoryStore();
    const ledger = await WebhookLedger.open(store);
    // Pairs out of order: 2, 1, 4, 3, …; one save each.
    for (let id = 1; id <= 3 * KEEP; id += 2) {
      handle(ledger, id + 1);
      handle(ledger, id);
      await ledger.save();
    }
    expect(ledger.cursor).toBe(2 * KEEP);
    expect(ledger.isDuplicate(2 * KEEP)).toBe(true);
    expect(handle(ledger, 3 * KEEP + 2)).toBe(true);
    await ledger.save();
    expect(await store.get("cursor")).toBe(2 * KEEP + 1);
    expect(await storedIds(store)).toBeLessThanOrEqual(KEEP + 16 * 2);
    const after = await WebhookLedger.open(store);
    expect(after.cursor).toBe(2 * KEEP + 1);
    for (const id of [2 * KEEP + 2, 3 * KEEP, 3 * KEEP + 2]) expect(after.isDuplicate(id)).toBe(true);
    expect(after.isDuplicate(3 * KEEP + 1)).toBe(false);
  });

  it("logs a drop below the floor (not known handled); not one at the floor, nor of a kept id", async () => {
    const log = recordingLogger();
    const ledger = await WebhookLedger.open(new MemoryStore(), log);
    for (let id = 2; id <= KEEP + 2; id++) handle(ledger, id);
    expect(ledger.cursor).toBe(2); // let go of, once KEEP newer were handled
    expect([ledger.isDuplicate(2), ledger.isDuplicate(KEEP + 2)]).toEqual([true, true]);
    expect(log.lines).toEqual([]);
    expect(ledger.isDuplicate(1)).toBe(true);
    expect(log.lines).toEqual([{ level: "warn", obj: { messageId: 1, floor: 2 }, msg: BELOW_FLOOR_LINE }]);
    // Late (what the pipeline counts apart from the repeats): below the floor alone.
    expect([1, 2, KEEP + 2].map((id) => ledger.isLate(id))).toEqual([true, false, false]);
  });

  it("reads a queue ledger's cursor and marks: what the queue handled is dropped", async () => {
    const store = new MemoryStore();
    await store.set("cursor", 100);
    await store.set("finished.0", "105,107-108");
    const ledger = await WebhookLedger.open(store);
    for (const id of [99, 100, 105, 107, 108]) expect(ledger.isDuplicate(id)).toBe(true);
    for (const id of [101, 106, 109]) expect(ledger.isDuplicate(id)).toBe(false);
  });

  it(`reads at most ${KEEP} ids from the store, however long its runs (the floor rises)`, async () => {
    const store = new MemoryStore();
    await store.set("finished", "1-100000000,5-6");
    await store.set("finished.3", "99999990-100000005");
    const ledger = await WebhookLedger.open(store);
    expect(ledger.cursor).toBe(100_000_005 - KEEP);
    expect(ledger.isDuplicate(100_000_005 - KEEP + 1)).toBe(true);
    expect(ledger.isDuplicate(100_000_005 - KEEP)).toBe(true);
    expect(handle(ledger, 100_000_006)).toBe(true);
    await ledger.save();
    expect(await store.get("cursor")).toBe(100_000_006 - KEEP);
    expect(await store.get("finished")).toBe("1-100000000,5-6"); // its highest is above the floor
    // KEEP more: the floor passes both keys read at open, and they are deleted.
    for (let id = 100_000_007; id < 100_000_006 + KEEP; id++) handle(ledger, id);
    await ledger.save();
    expect(ledger.cursor).toBe(100_000_005);
    expect(await store.get("finished")).toBeUndefined();
    expect(await store.get("finished.3")).toBeUndefined();
    expect(await storedIds(store)).toBe(KEEP);
  });
});
