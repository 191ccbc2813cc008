import { describe, expect, it } from "vitest";
import { EffectRecords } from "../../src/effects/effect-records.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";

function records() {
  let commits = 0;
  const store = new MemoryStore();
  const warnings: unknown[] = [];
  const log = { warn: (o: unknown) => warnings.push(o) } as never;
  const r = new EffectRecords(store.namespace("bot").namespace("effects"), {
    ttlMs: 3_600_000,
    commit: async () => {
      commits++;
    },
    log,
  });
  return { r, store, warnings, commits: () => commits };
}

describe("EffectRecords", () => {
  it("a re-run for the same event returns recorded results and acts only for new effects", async () => {
    const { r, commits } = records();
    const sent: string[] = [];
    const send = (text: string) => ({
      act: async () => {
        sent.push(text);
        return { id: sent.length };
      },
    });

    const first = r.run("m:42");
    expect(await first.once("send", send("a"))).toEqual({ id: 1 });
    expect(commits()).toBe(1);

    const again = r.run("m:42");
    expect(await again.once("send", send("a"))).toEqual({ id: 1 });
    expect(await again.once("send", send("b"))).toEqual({ id: 2 });
    expect(sent).toEqual(["a", "b"]);
    expect(again.made.map((m) => m.n)).toEqual([1, 2]);

    expect(await r.run("m:43").once("send", send("c"))).toEqual({ id: 3 });
    expect(sent).toEqual(["a", "b", "c"]);
  });

  it("an effect whose act failed is verified on the re-run; found means not made again", async () => {
    const { r } = records();
    let acts = 0;
    const steps = {
      act: async () => {
        acts++;
        throw new Error("502 after the server stored it");
      },
      verify: async () => ({ id: 7 }),
    };
    await expect(r.run("m:1").once("send", steps)).rejects.toThrow("502");
    expect(await r.run("m:1").once("send", steps)).toEqual({ id: 7 });
    expect(acts).toBe(1);
  });

  it("a pending effect that verify does not find acts again; one without verify acts again", async () => {
    const { r } = records();
    let acts = 0;
    const failing = {
      act: async () => {
        acts++;
        if (acts === 1) throw new Error("reset");
        return { ok: true };
      },
    };
    await expect(r.run("m:1").once("report", failing)).rejects.toThrow("reset");
    expect(await r.run("m:1").once("report", failing)).toEqual({ ok: true });
    expect(acts).toBe(2);

    let sends = 0;
    const notFound = {
      act: async () => (++sends === 1 ? Promise.reject(new Error("503")) : { id: 9 }),
      verify: async () => undefined,
    };
    await expect(r.run("m:2").once("send", notFound)).rejects.toThrow("503");
    expect(await r.run("m:2").once("send", notFound)).toEqual({ id: 9 });
    expect(sends).toBe(2);
  });

  it("another kind at the same number is made again, with a warning", async () => {
    const { r, warnings } = records();
    await r.run("m:1").once("send", { act: async () => ({ id: 1 }) });
    expect(await r.run("m:1").once("reaction", { act: async () => "added" })).toBe("added");
    expect(warnings).toEqual([{ event: "m:1", n: 1, recorded: "send", now: "reaction" }]);
  });

  it("records carried by a dead letter count when the store's have expired", async () => {
    const { r } = records();
    let acts = 0;
    const run = r.run("m:5", [{ n: 1, kind: "send", result: { id: 11 } }]);
    expect(await run.once("send", { act: async () => ({ id: ++acts }) })).toEqual({ id: 11 });
    expect(await run.once("send", { act: async () => ({ id: ++acts }) })).toEqual({ id: 1 });
    expect(acts).toBe(1);
  });
});
