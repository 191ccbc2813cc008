/** The ledger's cursor (low-water mark) and marks, with ids begun in order and out of order. */
import { describe, expect, it } from "vitest";
import { DeliveryLedger, MARK_KEYS } from "../../src/pipeline/delivery-ledger.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";

async function ledgerAt(cursor: number) {
  const store = new MemoryStore();
  const ledger = await DeliveryLedger.open(store);
  await ledger.baseline(cursor);
  /** The marks as the store holds them: ranges under `finished` and its slots, flattened to sorted ids. */
  const marks = async () => {
    const ids = new Set<number>();
    for (const value of await store.getMany(MARK_KEYS)) {
      for (const [from, to] of rangesOf(value)) for (let id = from; id <= to; id++) ids.add(id);
    }
    return [...ids].sort((a, b) => a - b).map((id) => `handled:${id}`);
  };
  return { ledger, store, marks };
}

function rangesOf(value: unknown): [number, number][] {
  if (typeof value !== "string" || value === "") return [];
  return value.split(",").map((run) => {
    const [from, to = from] = run.split("-").map(Number) as [number, number?];
    return [from, to];
  });
}

/** The mark keys present in `store`, and their values. */
async function markKeys(store: MemoryStore): Promise<Record<string, unknown>> {
  const values = await store.getMany(MARK_KEYS);
  return Object.fromEntries(
    MARK_KEYS.flatMap((key, i) => (values[i] === undefined ? [] : [[key, values[i]]])),
  );
}

async function finishAndSave(ledger: DeliveryLedger, id: number) {
  ledger.finish(id);
  await ledger.save();
}

describe("DeliveryLedger", () => {
  it("advances the cursor only past messages whose handlers all finished (begun in order)", async () => {
    const { ledger, store, marks } = await ledgerAt(0);
    for (const id of [1, 2, 3, 4, 5]) ledger.begin(id);
    await finishAndSave(ledger, 3);
    expect(ledger.cursor).toBe(0);
    expect(await marks()).toEqual(["handled:3"]);
    await finishAndSave(ledger, 1);
    expect(ledger.cursor).toBe(1);
    await finishAndSave(ledger, 2);
    expect(ledger.cursor).toBe(3);
    expect(await marks()).toEqual([]);
    await finishAndSave(ledger, 5);
    expect(ledger.cursor).toBe(3);
    expect(ledger.isDuplicate(5)).toBe(true);
    expect(ledger.isDuplicate(4)).toBe(true); // in flight
    await finishAndSave(ledger, 4);
    expect(ledger.cursor).toBe(5);
    expect(await store.get("cursor")).toBe(5);
    expect(ledger.isDuplicate(6)).toBe(false);
  });

  it("keeps the cursor below the lowest message in flight when ids were begun out of order", async () => {
    const { ledger, marks } = await ledgerAt(5);
    ledger.begin(10);
    ledger.begin(12);
    ledger.begin(7);
    await finishAndSave(ledger, 12);
    expect(ledger.cursor).toBe(6);
    expect(await marks()).toEqual(["handled:12"]);
    await finishAndSave(ledger, 10);
    expect(ledger.cursor).toBe(6);
    await finishAndSave(ledger, 7);
    expect(ledger.cursor).toBe(12);
    expect(await marks()).toEqual([]);
    // Once nothing is in flight, in-order tracking starts afresh.
    ledger.begin(20);
    ledger.begin(21);
    await finishAndSave(ledger, 21);
    expect(ledger.cursor).toBe(19);
    await finishAndSave(ledger, 20);
    expect(ledger.cursor).toBe(21);
  });

  it("finish only touches memory; save writes the net change once", async () => {
    const { ledger, store, marks } = await ledgerAt(0);
    let writes = 0;
    const set = store.set.bind(store);
    const del = store.delete.bind(store);
    store.set = (...args) => {
      writes++;
      return set(...args);
    };
    store.delete = (...args) => {
      writes++;
      return del(...args);
    };
    for (let id = 1; id <= 1000; id++) ledger.begin(id);
    ledger.finish(500); // out of order: a mark, in memory only
    for (let id = 1; id <= 400; id++) ledger.finish(id);
    expect(ledger.cursor).toBe(400);
    expect(writes).toBe(0);
    await ledger.save();
    expect(writes).toBe(2); // the cursor, and the marks (500)
    expect(await store.get("cursor")).toBe(400);
    expect(await marks()).toEqual(["handled:500"]);
    for (let id = 401; id <= 1000; id++) if (id !== 500) ledger.finish(id);
    await ledger.save();
    expect(writes).toBe(4); // the cursor, and the marks' slot deleted
    expect(await store.get("cursor")).toBe(1000);
    expect(await marks()).toEqual([]);
    await ledger.save();
    expect(writes).toBe(4); // nothing changed
    const reopened = await DeliveryLedger.open(store);
    expect(reopened.cursor).toBe(1000);
  });

  it("a mark saved before a restart still counts as handled after it", async () => {
    const { ledger, store } = await ledgerAt(0);
    ledger.begin(1);
    ledger.begin(2);
    ledger.finish(2);
    await ledger.save();
    const reopened = await DeliveryLedger.open(store);
    expect(reopened.cursor).toBe(0);
    expect(reopened.isDuplicate(2)).toBe(true);
    expect(reopened.isDuplicate(1)).toBe(false);
    reopened.begin(1);
    reopened.finish(1);
    await reopened.save();
    expect(reopened.cursor).toBe(1);
    expect(reopened.isDuplicate(2)).toBe(true); // its mark stays until the cursor passes it
    reopened.begin(3);
    reopened.finish(3);
    await reopened.save();
    expect(reopened.cursor).toBe(3);
    expect(await markKeys(store)).toEqual({});
  });

  it("stores marks as runs in one string; one-key-per-mark keys of earlier versions are not read", async () => {
    const { ledger, store } = await ledgerAt(0);
    for (let id = 1; id <= 20; id++) ledger.begin(id);
    for (const id of [20, 9, 3, 10, 5, 4]) ledger.finish(id);
    await ledger.save();
    expect(await markKeys(store)).toEqual({ "finished.0": "3-5,9-10,20" });
    // No listing at open: such keys are left as they are (docs/operations/upgrading.md).
    const legacy = new MemoryStore();
    await legacy.set("cursor", 100);
    await legacy.set("handled:102", 1);
    const old = await DeliveryLedger.open(legacy);
    expect(old.isDuplicate(102)).toBe(false);
    expect(await legacy.get("handled:102")).toBe(1);
  });

  it("a save writes only the marks made since the last one; with every slot taken, all marks go under `finished`", async () => {
    const { ledger, store, marks } = await ledgerAt(0);
    const written: string[] = [];
    const set = store.set.bind(store);
    store.set = (key, value, options) => {
      written.push(`${key}=${String(value)}`);
      return set(key, value, options);
    };
    const evens = (from: number, to: number) =>
      Array.from({ length: (to - from) / 2 + 1 }, (_, i) => from + 2 * i);
    // Message 1 stays in flight: each save's even id is a mark, kept until the cursor passes it.
    for (let id = 1; id <= 100; id++) ledger.begin(id);
    for (const id of evens(2, 32)) {
      ledger.finish(id);
      await ledger.save();
    }
    expect(written).toEqual(evens(2, 32).map((id, i) => `finished.${i}=${id}`));
    written.length = 0;
    ledger.finish(34);
    await ledger.save();
    expect(written).toEqual([`finished=${evens(2, 34).join(",")}`]);
    expect(Object.keys(await markKeys(store))).toEqual(["finished"]);
    ledger.finish(36);
    await ledger.save();
    expect(await markKeys(store)).toEqual({ finished: evens(2, 34).join(","), "finished.0": "36" });
    const reopened = await DeliveryLedger.open(store);
    for (let id = 1; id <= 38; id++) expect(reopened.isDuplicate(id)).toBe(id % 2 === 0 && id <= 36);
    // The cursor passes some: they are no longer written, and a key the cursor passed goes.
    ledger.finish(1);
    ledger.finish(3);
    ledger.finish(38);
    await ledger.save();
    expect(ledger.cursor).toBe(4);
    expect(await marks()).toEqual(evens(2, 38).map((id) => `handled:${id}`));
    for (let id = 5; id <= 35; id += 2) ledger.finish(id);
    await ledger.save();
    expect(ledger.cursor).toBe(36);
    expect(await markKeys(store)).toEqual({ "finished.1": "38" });
  });

  it("keeps cursor and marks right under any finishing order, and reopens to the same state", async () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let round = 0; round < 20; round++) {
      const { ledger, store } = await ledgerAt(1000);
      const ids = Array.from({ length: 300 }, (_, i) => 1001 + i);
      for (const id of ids) ledger.begin(id);
      const open = new Set(ids);
      const order = [...ids].sort(() => random() - 0.5);
      for (const [step, id] of order.entries()) {
        ledger.finish(id);
        open.delete(id);
        const lowestOpen = Math.min(...open);
        expect(ledger.cursor).toBe(open.size === 0 ? 1300 : lowestOpen - 1);
        if (step % 37 === 0) {
          await ledger.save();
          const reopened = await DeliveryLedger.open(store);
          expect(reopened.cursor).toBe(ledger.cursor);
          for (const other of ids) expect(reopened.isDuplicate(other)).toBe(!open.has(other));
        }
      }
      await ledger.save();
      expect(await store.get("cursor")).toBe(1300);
      expect(await markKeys(store)).toEqual({});
    }
  });

  it("stays right over a long run: ids begun late and out of order, finished in any order", async () => {
    let seed = 11;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const { ledger, store } = await ledgerAt(0);
    const open: number[] = [];
    const finished = new Set<number>();
    let next = 1;
    let highest = 0;
    for (let step = 0; step < 20_000; step++) {
      if (open.length < 50 && random() < 0.6) {
        // Mostly the next id; now and then one skipped earlier arrives late (and some never do).
        const late = random() < 0.05 ? next - 1 - Math.floor(random() * 5) : next;
        if (late === next) next += 1 + (random() < 0.1 ? 1 : 0);
        if (late < 1 || ledger.isDuplicate(late)) continue;
        ledger.begin(late);
        open.push(late);
        highest = Math.max(highest, late);
      } else if (open.length > 0) {
        const [id] = open.splice(Math.floor(random() * open.length), 1) as [number];
        ledger.finish(id);
        finished.add(id);
      }
      const lowestOpen = open.length === 0 ? Number.POSITIVE_INFINITY : Math.min(...open);
      expect(ledger.cursor).toBeLessThan(lowestOpen);
      if (step % 997 === 0) {
        await ledger.save();
        const reopened = await DeliveryLedger.open(store);
        for (const id of finished) expect(reopened.isDuplicate(id)).toBe(true);
        for (const id of open) expect(reopened.isDuplicate(id)).toBe(false);
      }
    }
    for (const id of open.splice(0)) ledger.finish(id);
    await ledger.save();
    expect(ledger.cursor).toBe(highest); // every begun message finished
    expect(await markKeys(store)).toEqual({});
  });

  it("ignores damaged runs in the stored marks", async () => {
    const store = new MemoryStore();
    await store.set("cursor", 1);
    await store.set("finished", "x,9-4,7,12-13,1e400");
    const ledger = await DeliveryLedger.open(store);
    expect([4, 7, 9, 12, 13, 14].map((id) => ledger.isDuplicate(id))).toEqual([
      false,
      true,
      false,
      true,
      true,
      false,
    ]);
  });
});

describe("a ledger the store lost", () => {
  it("carries on from this process's: its cursor and marks, written again", async () => {
    const { ledger: before } = await ledgerAt(10);
    for (const id of [11, 12, 13, 14]) before.begin(id);
    for (const id of [11, 13]) before.finish(id);
    // 12 unfinished (a run the stop cut): the cursor at 11, 13 a mark above it.
    expect(before.cursor).toBe(11);
    const store = new MemoryStore(); // what the store holds after Redis lost every key
    const fresh = await DeliveryLedger.open(store);
    expect(await fresh.carry(before)).toBe(true);
    expect(fresh.cursor).toBe(11);
    expect([11, 12, 13, 14].map((id) => fresh.isDuplicate(id))).toEqual([true, false, true, false]);
    // Written again: a start after this one reads the same.
    const reread = await DeliveryLedger.open(store);
    expect(reread.cursor).toBe(11);
    expect([12, 13].map((id) => reread.isDuplicate(id))).toEqual([false, true]);
    // 12 handled now: the cursor moves up to it, 13 kept as a mark (as marks read at a start are).
    fresh.begin(12);
    fresh.finish(12);
    expect([fresh.cursor, fresh.isDuplicate(13), fresh.isDuplicate(14)]).toEqual([12, true, false]);
    // Nothing to carry: a store that kept its cursor, or a process that had none.
    expect(await reread.carry(before)).toBe(false);
    const none = await DeliveryLedger.open(new MemoryStore());
    expect(await (await DeliveryLedger.open(new MemoryStore())).carry(none)).toBe(false);
  });
});
