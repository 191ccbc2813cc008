import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/api/errors.ts";
import { EffectRecords } from "../../src/effects/effect-records.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";
import { TestClock } from "../../src/testing/test-clock.ts";

function records() {
  const warnings: unknown[] = [];
  const verified: string[] = [];
  const log = { warn: (o: unknown) => warnings.push(o) } as never;
  const r = new EffectRecords(new MemoryStore().namespace("bot").namespace("effects"), {
    ttlMs: 3_600_000,
    log,
    onVerify: (outcome) => verified.push(outcome),
  });
  return { r, warnings, verified };
}

/** An effect that counts its acts and answers { id: n }. */
function sender() {
  const sent: string[] = [];
  return {
    sent,
    send: (text: string, verify?: () => Promise<{ id: number } | undefined>) => ({
      act: async () => {
        sent.push(text);
        return { id: sent.length };
      },
      ...(verify ? { verify } : {}),
    }),
  };
}

describe("EffectRecords", () => {
  it("a re-run for the same event returns recorded results and acts only for new effects", async () => {
    const { r } = records();
    const { sent, send } = sender();
    expect(await r.run("m:42", false).once("send", send("a"))).toEqual({ id: 1 });
    const again = r.run("m:42", true);
    expect(await again.once("send", send("a"))).toEqual({ id: 1 });
    expect(await again.once("send", send("b"))).toEqual({ id: 2 });
    expect(sent).toEqual(["a", "b"]);
    expect(again.made.map((m) => m.n)).toEqual([1, 2]);
    expect(await r.run("m:43", false).once("send", send("c"))).toEqual({ id: 3 });
  });

  it("on a re-run only an effect left pending is looked for; found means not made again", async () => {
    const { r, verified } = records();
    const { sent, send } = sender();
    const first = r.run("m:1", false);
    await first.once("send", send("one"));
    // The second send's answer was lost (it may be stored): its record stays pending.
    const lost = { act: () => Promise.reject(new Error("reset")), verify: async () => undefined };
    await expect(first.once("send", lost)).rejects.toThrow("reset");
    expect(first.made).toEqual([
      { n: 1, kind: "send", result: { id: 1 } },
      { n: 2, kind: "send", result: null, pending: true },
    ]);
    const rerun = r.run("m:1", true);
    const never = async () => {
      throw new Error("an effect with a finished record or none is not looked for");
    };
    expect(await rerun.once("send", send("one", never))).toEqual({ id: 1 });
    expect(
      await rerun.once(
        "send",
        send("two", async () => ({ id: 7 })),
      ),
    ).toEqual({ id: 7 });
    expect(await rerun.once("send", send("three", never))).toEqual({ id: 2 });
    expect(sent).toEqual(["one", "three"]);
    expect(verified).toEqual(["found"]);
  });

  it("a re-run of an event whose handler never began makes its effects without a look", async () => {
    const { r, verified } = records();
    const { sent, send } = sender();
    const never = async () => {
      throw new Error("nothing was begun: no read-back");
    };
    const caughtUp = r.run("m:6", true);
    expect(await caughtUp.once("send", send("y", never))).toEqual({ id: 1 });
    expect(await caughtUp.once("send", send("z", never))).toEqual({ id: 2 });
    expect(sent).toEqual(["y", "z"]);
    expect(verified).toEqual([]);
  });

  it("a labelled effect cut short while made (the stop's deadline, a lost answer) keeps when it was begun: a re-run that finds it made counts from then", async () => {
    // A dialog's question sent, its run aborted before the answer came, the bot down an hour:
    // the question's deadline counts from its send. Before, the record left behind had no time,
    // and the re-run that found the question stamped it with its own: the wait began again.
    const clock = new TestClock({ held: true, start: 1_000_000 });
    const store = new MemoryStore().namespace("bot").namespace("effects");
    const r = new EffectRecords(store, { ttlMs: 3_600_000, clock });
    const never = async (): Promise<{ id: number }> => {
      throw new Error("not made again: it was found");
    };
    const cut = r.run("m:9", false);
    cut.label("ask:q");
    await expect(
      cut.once("send", { act: () => Promise.reject(new Error("aborted")), verify: never }),
    ).rejects.toThrow("aborted");
    await clock.advance(3_600_000);
    const rerun = new EffectRecords(store, { ttlMs: 3_600_000, clock }).run("m:9", true);
    rerun.label("ask:q");
    expect(await rerun.once("send", { act: never, verify: async () => ({ id: 4 }) })).toEqual({ id: 4 });
    expect(rerun.made.map((m) => m.begun)).toEqual([1_000_000]);
  });

  it("a pending effect that verify does not find is made; a first run never verifies", async () => {
    const { r, verified } = records();
    const { sent, send } = sender();
    const never = async () => {
      throw new Error("a first run must not verify");
    };
    await r.run("m:5", false).once("send", send("x", never));
    const cut = r.run("m:6", false);
    await expect(
      cut.once("send", { act: () => Promise.reject(new Error("cut")), verify: never }),
    ).rejects.toThrow("cut");
    expect(
      await r.run("m:6", true).once(
        "send",
        send("y", async () => undefined),
      ),
    ).toEqual({ id: 2 });
    expect(sent).toEqual(["x", "y"]);
    expect(verified).toEqual(["absent"]);
  });

  it("the pending record is committed before the effect is made", async () => {
    const order: string[] = [];
    const r = new EffectRecords(new MemoryStore(), {
      ttlMs: 60_000,
      commit: async () => {
        order.push("commit");
      },
    });
    await r.run("m:1", false).once("send", {
      act: async () => {
        order.push("act");
        return { id: 1 };
      },
      verify: async () => undefined,
    });
    await r.run("m:1", false).once("reaction", {
      act: async () => {
        order.push("no verify, no pending record");
        return "added";
      },
    });
    expect(order).toEqual(["commit", "act", "no verify, no pending record"]);
  });

  it("another kind at the same number is made again, with a warning", async () => {
    const { r, warnings } = records();
    await r.run("m:1", false).once("send", { act: async () => ({ id: 1 }) });
    expect(await r.run("m:1", true).once("reaction", { act: async () => "added" })).toBe("added");
    expect(warnings).toEqual([{ event: "m:1", n: 1, recorded: "send", now: "reaction" }]);
  });

  it("an effect the server refused (a JSON 4xx) was not made: no record, none of the run's effects, made anew with no look", async () => {
    const store = new MemoryStore().namespace("bot").namespace("effects");
    const r = new EffectRecords(store, { ttlMs: 3_600_000 });
    const { sent, send } = sender();
    const refusal = (code: string, status = 400) =>
      new ApiError({ status, code, msg: "refused", endpoint: "POST /messages", data: {} });
    const never = async () => {
      throw new Error("a refused effect is not looked for");
    };
    const refused = (err: Error) => ({ act: () => Promise.reject(err), verify: never });
    const first = r.run("m:9", false);
    await first.once("send", send("one"));
    await expect(first.once("send", refused(refusal("STREAM_DOES_NOT_EXIST")))).rejects.toThrow("refused");
    // Refused as the cause of the error that names it (a booking's): the same.
    const named = new Error("channel unknown", { cause: refusal("STREAM_DOES_NOT_EXIST") });
    await expect(first.once("send", refused(named))).rejects.toThrow("channel unknown");
    // A 5xx may have made it: left pending, looked for.
    await expect(first.once("send", refused(refusal("BAD_GATEWAY", 502)))).rejects.toThrow("refused");
    const pending = { n: 4, kind: "send", result: null, pending: true };
    expect(first.made).toEqual([{ n: 1, kind: "send", result: { id: 1 } }, pending]);
    expect(first.kept).toEqual(first.made);
    expect([await store.get("m:9#2"), await store.get("m:9#3")]).toEqual([undefined, undefined]);
    // A re-run makes the refused ones anew with no look; only the one left pending is looked for.
    const rerun = r.run("m:9", true);
    expect(await rerun.once("send", send("one", never))).toEqual({ id: 1 });
    expect(await rerun.once("send", send("two", never))).toEqual({ id: 2 });
    expect(await rerun.once("send", send("three", never))).toEqual({ id: 3 });
    const absent = async () => undefined;
    expect(await rerun.once("send", send("four", absent))).toEqual({ id: 4 });
    expect(sent).toEqual(["one", "two", "three", "four"]);
    // A letter kept before carries one as pending (looked for); refused now, it is carried no more.
    const carried = [{ n: 1, kind: "send", result: null, pending: true as const }];
    const again = r.run("m:10", true, carried);
    const lost = { act: () => Promise.reject(refusal("BAD_REQUEST")), verify: async () => undefined };
    await expect(again.once("send", lost)).rejects.toThrow("refused");
    expect(again.kept).toEqual([]);
    expect(again.made).toEqual([]);
  });

  it("records carried by a dead letter count when the store's have expired", async () => {
    const { r } = records();
    const { sent, send } = sender();
    const run = r.run("m:5", false, [{ n: 1, kind: "send", result: { id: 11 } }]);
    expect(await run.once("send", send("old"))).toEqual({ id: 11 });
    expect(await run.once("send", send("new"))).toEqual({ id: 1 });
    expect(sent).toEqual(["new"]);
  });
});
