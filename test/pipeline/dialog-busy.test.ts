/**
 * A dialog whose answer was taken is busy until its run asks again, is ready, ends or gives the
 * answer back: the person's next message is told to wait (`busy`) meanwhile, and the wait ends
 * with that change, or with the message's own signal.
 */
import { expect, it } from "vitest";
import { whenSettled } from "../../src/pipeline/dialogs/dialog-entry.ts";
import type { DialogRecord } from "../../src/pipeline/dialogs/dialog-record.ts";
import type { Dialogs } from "../../src/pipeline/dialogs/dialogs.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { memoryDialogs } from "../support/memory-dialogs.ts";

const T0 = 1_000_000;
const CONVERSATION = "dm:3,7";

function record(steps: number): DialogRecord {
  return {
    v: 1,
    id: "100",
    userId: 7,
    userName: "Mel Member",
    conversation: CONVERSATION,
    where: "direct message",
    origin: { type: "message", id: 0, message: { id: 100 } },
    startedAt: T0,
    steps: Array.from({ length: steps }, (_, i) => ({
      question: `Q${i + 1}`,
      askedAt: T0,
      deadline: T0 + 60_000,
      answers: [],
    })),
    waiting: true,
    values: [],
    effects: [],
  };
}

async function taken() {
  const dialogs = memoryDialogs(new ManualClock(T0));
  await dialogs.park(record(1));
  const found = dialogs.match(CONVERSATION, 7, 101);
  if (found === undefined || typeof found === "string" || !("entry" in found)) throw new Error("not taken");
  const next = dialogs.match(CONVERSATION, 7, 102);
  if (next === undefined || typeof next === "string" || !("busy" in next)) throw new Error("not busy");
  return { dialogs, entry: found.entry, busy: next.busy };
}

it("the next message waits until the dialog asks again, then answers it", async () => {
  const { dialogs, busy } = await taken();
  let over: boolean | undefined;
  const wait = whenSettled(busy, new AbortController().signal).then((v) => {
    over = v;
  });
  await Promise.resolve();
  expect(over).toBeUndefined();
  await dialogs.park(record(2));
  await wait;
  expect(over).toBe(true);
  expect(dialogs.match(CONVERSATION, 7, 102)).toMatchObject({ entry: { step: 1 } });
});

it("the wait ends when the dialog ends, is ready, or waits again; or when the message's signal aborts", async () => {
  const ends: [string, (d: Dialogs, e: never) => unknown][] = [
    ["end", (d) => d.end("100")],
    ["ready", (d) => d.markReady(record(1))],
    ["unmatch", (d, e) => d.unmatch(e, 101)],
    ["stop", (d) => d.stop()],
  ];
  for (const [name, end] of ends) {
    const { dialogs, entry, busy } = await taken();
    const wait = whenSettled(busy, new AbortController().signal);
    await end(dialogs, entry as never);
    expect([name, await wait]).toEqual([name, true]);
  }
  const { dialogs, busy } = await taken();
  const controller = new AbortController();
  const wait = whenSettled(busy, controller.signal);
  controller.abort();
  expect(await wait).toBe(false);
  // Its run still under way: the next message is still told to wait.
  expect(dialogs.match(CONVERSATION, 7, 103)).toEqual({ busy });
});

it("a first question being asked makes the dialog busy until its record is kept, or the run gives up", async () => {
  const dialogs = memoryDialogs(new ManualClock(T0));
  const fresh = { ...record(0), waiting: true };
  dialogs.asking(fresh);
  const found = dialogs.match(CONVERSATION, 7, 101);
  if (found === undefined || typeof found === "string" || !("busy" in found)) throw new Error("not busy");
  const wait = whenSettled(found.busy, new AbortController().signal);
  await dialogs.park(record(1));
  expect(await wait).toBe(true);
  expect(dialogs.match(CONVERSATION, 7, 101)).toMatchObject({ entry: { step: 0 } });
  // A kept record stays when the run that asked fails afterwards.
  dialogs.notAsking("100");
  expect(dialogs.size).toBe(1);

  const other = memoryDialogs(new ManualClock(T0));
  other.asking(fresh);
  const busy = other.match(CONVERSATION, 7, 101);
  if (busy === undefined || typeof busy === "string" || !("busy" in busy)) throw new Error("not busy");
  const given = whenSettled(busy.busy, new AbortController().signal);
  other.notAsking("100");
  expect(await given).toBe(true);
  expect(other.size).toBe(0);
  expect(other.match(CONVERSATION, 7, 101)).toBeUndefined();
});
