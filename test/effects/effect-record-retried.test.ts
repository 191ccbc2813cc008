/**
 * A labelled effect (a dialog's question) whose pending record's write is tried again through a
 * store failure: its lookup, made before the first try, may be stale by the time a later try
 * lands. Seen in the Sentinel e2e: on a daemon that had just lost the bot's lease, a dialog's run
 * looked the question's record up (none), then its pending write was refused by the fence and
 * tried again; meanwhile the other daemon asked the question, took the answer and ended the
 * dialog; the first daemon won the lease back, the write passed the new fence, and the question
 * was sent again after "survey done". No clock: the failures are the store's, the tries counted.
 */
import { describe, expect, it } from "vitest";
import { EffectRecords, type RecordWrite } from "../../src/effects/effect-records.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";
import type { StateStore } from "../../src/state/state-store.ts";

/** A store whose next `failing` writes (sets and batches) are refused (as a fenced or unreachable Redis refuses them). */
function failingStore(inner: StateStore) {
  const state = { failing: 0 };
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === "set" || prop === "applyWrites")
        return (...args: unknown[]) => {
          if (state.failing > 0) {
            state.failing--;
            return Promise.reject(new Error("Write refused: this instance no longer holds the lease"));
          }
          return (target[prop] as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        };
      return Reflect.get(target, prop, receiver);
    },
  });
  return { store, state };
}

function setup() {
  const { store, state } = failingStore(new MemoryStore().namespace("bot").namespace("effects"));
  const records = new EffectRecords(store, { ttlMs: 3_600_000 });
  const sent: string[] = [];
  const send = (who: string) => ({
    act: async () => {
      sent.push(who);
      return { id: sent.length };
    },
    verify: async () => undefined,
  });
  return { records, state, sent, send };
}

/** Tries `write` again after each failure, running `meanwhile` once between the first two tries. */
function retryingWith(meanwhile: () => Promise<unknown>): RecordWrite {
  return async (write) => {
    let ran = false;
    for (;;) {
      try {
        return await write();
      } catch {
        if (!ran) {
          ran = true;
          await meanwhile();
        }
      }
    }
  };
}

describe("a labelled effect's pending write tried again", () => {
  it("is not made when another run finished it while the write was refused", async () => {
    const { records, state, sent, send } = setup();
    // The other daemon's run of the same turn: it asks the question while this one waits.
    const other = async () => {
      const run = records.run("m:2", true, [], true);
      run.label("ask:#2");
      await run.once("send", send("other"));
    };
    const stale = records.run("m:2", true, [], true);
    stale.label("ask:#2", retryingWith(other));
    state.failing = 1;
    const result = await stale.once("send", send("stale"));
    expect(sent).toEqual(["other"]);
    // The other run's answer, taken as this run's, found made by an earlier run.
    expect(result).toEqual({ id: 1 });
    expect(stale.made).toEqual([{ n: 1, kind: "send", result: { id: 1 }, fp: "ask:#2" }]);
    expect(stale.madeEarlier(1)).toBe(true);
  });

  it("is made once the write lands when no other run made it", async () => {
    const { records, state, sent, send } = setup();
    const run = records.run("m:3", true, [], true);
    run.label(
      "ask:#1",
      retryingWith(async () => {}),
    );
    state.failing = 2;
    expect(await run.once("send", send("only"))).toEqual({ id: 1 });
    expect(sent).toEqual(["only"]);
    expect(run.madeEarlier(1)).toBe(false);
  });
});
