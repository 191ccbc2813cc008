/**
 * A bot's dialogs as their one writer keeps them: what a message is to a waiting dialog (an
 * answer, a copy of one, sent before the question, sent after the deadline), a busy dialog's
 * wait, appends that land with their reply lost, and an end that refuses every later append.
 * On a memory store and a manual clock: nothing here waits for time to pass.
 */
import { expect, it } from "vitest";
import type { RoleName } from "../../src/effects/users/roles.ts";
import { whenSettled } from "../../src/pipeline/dialogs/dialog-entry.ts";
import { DialogEnded, LogMoved } from "../../src/pipeline/dialogs/dialog-log.ts";
import { foldLog, headAfter, type LogEntry, newHead } from "../../src/pipeline/dialogs/dialog-record.ts";
import type { Dialogs } from "../../src/pipeline/dialogs/dialogs.ts";
import { cancels, escapesOf } from "../../src/pipeline/dialogs/prompt-options.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";
import { StateError } from "../../src/state/state-error.ts";
import type { OnceMarker, StoreWrite } from "../../src/state/state-store.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { asked, memoryDialogs, waitAt } from "../support/memory-dialogs.ts";

const T0 = 1_000_000_000;
const CONVERSATION = "dm:3,7";
/** Message `id`, sent `at` (epoch ms; default before the deadline). */
const msg = (id: number, at = T0) => ({ id, timestamp: Math.floor(at / 1000) });
/** A run that is never stopped. */
const live = new AbortController().signal;

/** Dialog 100: its question is message 101, due a minute after T0. */
async function waiting(dialogs = memoryDialogs(new ManualClock(T0))) {
  await waitAt(dialogs, { id: 100, conversation: CONVERSATION, at: T0, deadline: T0 + 60_000 });
  return dialogs;
}

async function taken() {
  const dialogs = await waiting();
  const found = dialogs.match(CONVERSATION, 7, msg(102));
  if (found === undefined || typeof found === "string" || !("entry" in found)) throw new Error("not taken");
  const next = dialogs.match(CONVERSATION, 7, msg(103));
  if (next === undefined || typeof next === "string" || !("busy" in next)) throw new Error("not busy");
  return { dialogs, entry: found.entry, busy: next.busy };
}

it("a message answers only after the question, before the deadline, from the person asked, once", async () => {
  const dialogs = await waiting();
  // Sent before the question (message 101): an ordinary message, and the dialog still waits.
  expect(dialogs.match(CONVERSATION, 7, msg(99))).toBeUndefined();
  expect(dialogs.match(CONVERSATION, 7, msg(101))).toBeUndefined();
  // Someone else, or elsewhere: not this dialog's.
  expect(dialogs.match(CONVERSATION, 8, msg(102))).toBeUndefined();
  expect(dialogs.match("dm:3,8", 7, msg(102))).toBeUndefined();
  const found = dialogs.match(CONVERSATION, 7, msg(102));
  if (found === undefined || typeof found === "string" || !("entry" in found))
    throw new Error("not an answer");
  await dialogs.answer(found.entry, msg(102), "a1");
  // Caught up again after a crash (its ledger mark not yet written): a copy, handled.
  expect(dialogs.match(CONVERSATION, 7, msg(102))).toBe("duplicate");
  expect((await dialogs.record("100"))?.steps[0]?.answers).toEqual([
    { id: 102, text: "a1", timestamp: T0 / 1000 },
  ]);
});

it("the message that began a dialog, caught up again after its question was kept, is handled", async () => {
  const store = new MemoryStore();
  await waiting(memoryDialogs(new ManualClock(T0), store));
  // A restart before the message was marked handled: the dialog's log is its commit.
  const again = memoryDialogs(new ManualClock(T0), store);
  await again.load();
  expect(again.match(CONVERSATION, 7, msg(100))).toBe("duplicate");
  expect(again.match(CONVERSATION, 7, msg(99))).toBeUndefined();
});

it("a message sent after the deadline is late: the deadline is run first, the message is no answer", async () => {
  // Handled once the deadline passed by this machine's clock (caught up after a restart).
  const dialogs = await waiting(memoryDialogs(new ManualClock(T0 + 61_000)));
  const late = dialogs.match(CONVERSATION, 7, msg(102, T0 + 61_000));
  expect(late).toMatchObject({ late: { id: "100" } });
  await dialogs.timeOut((late as { late: never }).late);
  const record = await dialogs.record("100");
  expect(record?.steps[0]).toMatchObject({ timedOut: true, answers: [] });
});

it("a message that reached the bot at the deadline's very millisecond is late, as the timer counts it", async () => {
  const clock = new ManualClock(T0);
  const dialogs = await waiting(memoryDialogs(clock));
  await clock.tick(60_000);
  // Handled before the timer's run, which is due at this millisecond too: the same verdict.
  expect(dialogs.match(CONVERSATION, 7, msg(102, T0 + 60_000))).toMatchObject({ late: { id: "100" } });
});

it("a message stamped after the deadline by a server clock ahead, handled before it by this machine's, is the answer", async () => {
  const clock = new ManualClock(T0);
  const dialogs = await waiting(memoryDialogs(clock));
  await clock.tick(59_000);
  expect(dialogs.match(CONVERSATION, 7, msg(102, T0 + 90_000))).toMatchObject({ entry: { id: "100" } });
});

it("an append that landed with its reply lost is found made when tried again, and made once", async () => {
  const store = new LosingStore();
  const dialogs = await waiting(memoryDialogs(new ManualClock(T0), store));
  const found = dialogs.match(CONVERSATION, 7, msg(102)) as { entry: never };
  store.loseNext = true;
  await expect(dialogs.answer(found.entry, msg(102), "a1")).rejects.toThrow(/reply lost/);
  // The same append again: found made (its marker), not made twice.
  await dialogs.answer(found.entry, msg(102), "a1");
  const record = await dialogs.record("100");
  expect(record?.steps[0]?.answers.map((a) => a.text)).toEqual(["a1"]);
  expect(record?.seq).toBe(3);
});

it("an end is final: a run in flight that asks again afterwards is refused, in memory and in the store", async () => {
  const { dialogs, entry } = await taken();
  await dialogs.answer(entry, msg(102), "a1");
  const head = entry.head;
  expect(await dialogs.end("100", "operator", live)).toBe(true);
  await expect(dialogs.append(head, [asked(1, 104, T0, T0 + 60_000)], false)).rejects.toBeInstanceOf(
    DialogEnded,
  );
  // Another writer holding the same header (another instance) is refused by the store itself.
  await expect(dialogs.log.append(head, [asked(1, 104, T0, T0 + 60_000)])).rejects.toBeInstanceOf(
    DialogEnded,
  );
  expect(await dialogs.end("100", "operator", live)).toBe(false);
  expect(dialogs.size).toBe(0);
});

it("an ended dialog's note is kept until it is said, however long that takes; its header goes a week after", async () => {
  const clock = new ManualClock(T0);
  const dialogs = await waiting(memoryDialogs(clock, new MemoryStore({ now: () => clock.now() })));
  await waitAt(dialogs, { id: 200, conversation: "dm:3,8", at: T0, deadline: T0 + 60_000 });
  const note = { to: { type: "direct", to: [7], content: "ended" }, at: T0, self: 3 };
  expect(await dialogs.end("100", "operator", live, note)).toBe(true);
  expect(await dialogs.end("200", "operator", live)).toBe(true);
  const week = 7 * 86_400_000;
  // A bot down for weeks says the note at its next start: the header waits for it.
  await clock.tick(4 * week);
  expect((await dialogs.log.heads()).map((h) => [h.id, h.note])).toEqual([["100", note]]);
  // One without a note is gone after a week, as is one once its note was said.
  expect(await dialogs.log.head("200")).toBeUndefined();
  await dialogs.log.noteSaid("100");
  expect(await dialogs.log.heads()).toEqual([]);
  await clock.tick(week - 1);
  expect((await dialogs.log.head("100"))?.ended).toBe("operator");
  await clock.tick(1);
  expect(await dialogs.log.head("100")).toBeUndefined();
});

it("a log ended as failed begins again from the record its dead letter carries, once; not one that went on", async () => {
  const clock = new ManualClock(T0);
  const store = new LosingStore({ now: () => clock.now() });
  const mine = await waiting(memoryDialogs(clock, store));
  const answered = await mine.answer(mine.entry("100")!, msg(102), "a1");
  expect(await mine.end("100", "failed", live)).toBe(true);
  // The letter's retry: the reply of the first try is lost, the second finds it made.
  store.loseNext = true;
  await expect(mine.reopen(answered)).rejects.toThrow(/reply lost/);
  const again = await mine.reopen(answered);
  expect(again).toMatchObject({ steps: answered.steps, origin: answered.origin, answered: [102], seq: 1 });
  expect(again.ended).toBeUndefined();
  // Kept past the week an ended header is kept for, and appended to as any log.
  await clock.tick(8 * 86_400_000);
  const next = await mine.append(again, [asked(1, 104, clock.now(), clock.now() + 60_000)], false);
  expect(await mine.record("100", true)).toMatchObject({ seq: 2, step: 1, waiting: true });
  // Gone on since: a retry of the same letter leaves the log as it is.
  await expect(mine.reopen(answered)).rejects.toBeInstanceOf(LogMoved);
  await mine.end("100", "operator", live);
  await expect(mine.reopen(answered)).rejects.toBeInstanceOf(DialogEnded);
  expect(next.seq).toBe(2);
});

it("an append over a log another writer moved is refused, not merged", async () => {
  const { dialogs, entry } = await taken();
  const stale = entry.head;
  await dialogs.answer(entry, msg(102), "a1");
  await expect(dialogs.log.append(stale, [asked(1, 104, T0, T0 + 60_000)])).rejects.toBeInstanceOf(LogMoved);
});

it("two starts of one person's dialog at once: the check and the reservation are one step", async () => {
  const dialogs = memoryDialogs(new ManualClock(T0));
  const head = (id: string) =>
    newHead({
      id,
      userId: 7,
      userName: "Mel",
      conversation: CONVERSATION,
      where: "direct message",
      startedAt: T0,
    });
  const started = await Promise.all([
    dialogs.begin(head("s1"), {}, "job"),
    dialogs.begin(head("s2"), {}, "job"),
  ]);
  expect(started).toEqual([true, false]);
  // The same id again, even once ended, starts nothing.
  await dialogs.end("s1", "handler", live);
  expect(await dialogs.begin(head("s1"), {}, "job")).toBe(false);
});

it("the next message waits until the dialog asks again, then answers it", async () => {
  const { dialogs, entry, busy } = await taken();
  let over: boolean | undefined;
  const wait = whenSettled(busy, new AbortController().signal).then((v) => {
    over = v;
  });
  await dialogs.answer(entry, msg(102), "a1");
  await Promise.resolve();
  expect(over).toBeUndefined();
  await dialogs.append(entry.head, [asked(1, 104, T0, T0 + 60_000)], false);
  await wait;
  expect(over).toBe(true);
  expect(dialogs.match(CONVERSATION, 7, msg(105))).toMatchObject({ entry: { head: { step: 1 } } });
});

it("the wait ends when the dialog ends, is ready, or waits again; or when the message's signal aborts", async () => {
  const ends: [string, (d: Dialogs, e: never) => unknown][] = [
    ["end", (d) => d.end("100", "handler", live)],
    ["ready", async (d) => d.markReady({ id: "100", record: (await d.record("100"))! })],
    ["unmatch", (d, e) => d.unmatch(e)],
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
  expect(dialogs.match(CONVERSATION, 7, msg(104))).toEqual({ busy });
});

it("a first question being asked makes the dialog busy until its log is kept, or the run gives up", async () => {
  const dialogs = memoryDialogs(new ManualClock(T0));
  const fresh = newHead({
    id: "100",
    userId: 7,
    userName: "Mel",
    conversation: CONVERSATION,
    where: "dm",
    startedAt: T0,
  });
  dialogs.asking(fresh, CONVERSATION, true);
  const found = dialogs.match(CONVERSATION, 7, msg(102));
  if (found === undefined || typeof found === "string" || !("busy" in found)) throw new Error("not busy");
  const wait = whenSettled(found.busy, new AbortController().signal);
  await waitAt(dialogs, { id: 100, conversation: CONVERSATION, at: T0, deadline: T0 + 60_000 });
  expect(await wait).toBe(true);
  expect(dialogs.match(CONVERSATION, 7, msg(102))).toMatchObject({ entry: { head: { step: 0 } } });
  // A kept log stays when the run that asked fails afterwards.
  dialogs.notAsking(fresh.id);
  expect(dialogs.size).toBe(1);
  // A replayed run of its first message (a dead letter) asks again: the kept entry stays as it is.
  const kept = dialogs.entry("100");
  dialogs.asking(fresh, CONVERSATION, true);
  dialogs.notAsking(fresh.id);
  expect(dialogs.entry("100")).toBe(kept);
  expect(kept?.head.seq).toBeGreaterThan(0);

  const other = memoryDialogs(new ManualClock(T0));
  other.asking(fresh, CONVERSATION, true);
  const busy = other.match(CONVERSATION, 7, msg(102));
  if (busy === undefined || typeof busy === "string" || !("busy" in busy)) throw new Error("not busy");
  const given = whenSettled(busy.busy, new AbortController().signal);
  other.notAsking(fresh.id);
  expect(await given).toBe(true);
  expect(other.size).toBe(0);
  expect(other.match(CONVERSATION, 7, msg(102))).toBeUndefined();
});

it("a start reads the headers only, and finds an answer recorded but not yet run", async () => {
  const store = new MemoryStore();
  const first = memoryDialogs(new ManualClock(T0), store);
  await waitAt(first, { id: 100, conversation: CONVERSATION, at: T0, deadline: T0 + 60_000 });
  first.match(CONVERSATION, 7, msg(102));
  await first.answer(first.entry("100")!, msg(102), "a1");
  const again = memoryDialogs(new ManualClock(T0), store);
  const { ready } = await again.load();
  expect(ready.map((h) => [h.id, h.waiting, h.answered])).toEqual([["100", false, [102]]]);
  expect(again.match(CONVERSATION, 7, msg(102))).toBe("duplicate");
});

it("several people asked in one conversation: each answer goes to the dialog of its sender", async () => {
  const dialogs = memoryDialogs(new ManualClock(T0));
  const channel = "channel:9:standup";
  for (const [id, userId] of [
    [100, 7],
    [200, 8],
  ] as const) {
    const head = {
      ...newHead({
        id: String(id),
        userId,
        userName: `u${userId}`,
        conversation: channel,
        where: "#x > standup",
        startedAt: T0,
      }),
    };
    const origin = { type: "message", id: 0, message: { id } };
    await dialogs.append(head, [{ t: "start", origin, at: T0 }, asked(0, id + 1, T0, T0 + 60_000)], true);
  }
  expect(dialogs.match(channel, 9, msg(300))).toBeUndefined();
  const eight = dialogs.match(channel, 8, msg(300)) as { entry: { id: string } };
  expect(eight.entry.id).toBe("200");
  expect(await dialogs.end("200", "handler", live)).toBe(true);
  // The other one still waits there; the ended one is gone from the place.
  expect(dialogs.match(channel, 8, msg(301))).toBeUndefined();
  expect((dialogs.match(channel, 7, msg(302)) as { entry: { id: string } }).entry.id).toBe("100");
});

it("a log kept one key per entry (as first written) is read, and appended to, in order", async () => {
  const store = new MemoryStore();
  const ns = store.namespace("dialogs");
  const head = {
    ...newHead({
      id: "100",
      userId: 7,
      userName: "Mel",
      conversation: CONVERSATION,
      where: "direct message",
      startedAt: T0,
    }),
    seq: 2,
    step: 0,
    asked: 101,
    deadline: T0 + 60_000,
    waiting: true,
  };
  delete (head as { n?: number }).n;
  await ns.set("h:100", head);
  await ns.set("e:100:000000", { t: "start", origin: { id: 100 }, at: T0 });
  await ns.set("e:100:000001", asked(0, 101, T0, T0 + 60_000));
  const dialogs = memoryDialogs(new ManualClock(T0), store);
  expect(await dialogs.load()).toEqual({ ready: [], lost: [] });
  const found = dialogs.match(CONVERSATION, 7, msg(102)) as { entry: never };
  const record = await dialogs.answer(found.entry, msg(102), "a1");
  expect(record.origin).toEqual({ id: 100 });
  expect(record.steps[0]?.answers.map((a) => a.text)).toEqual(["a1"]);
  expect(await dialogs.record("100")).toMatchObject({ seq: 3, n: 3, steps: [{ question: "Q1" }] });
});

it("a question others may answer: taken from an allowed person only, who is recorded; one per conversation", async () => {
  const rm = new Set([7, 9]);
  const inGroup = (g: string, id: number) => g === "rm" && rm.has(id);
  const dialogs = memoryDialogs(new ManualClock(T0), new MemoryStore(), { inGroup });
  const channel = "channel:9:deploys";
  const head = newHead({
    id: "100",
    userId: 7,
    userName: "Rae",
    conversation: channel,
    where: "#ops > deploys",
    startedAt: T0,
  });
  const question = { ...asked(0, 101, T0, T0 + 60_000), from: { group: "rm", except: [7] } };
  await dialogs.append(head, [{ t: "start", origin: { id: 100 }, at: T0 }, question], true);
  // The requester (in the group, but excepted) and someone outside the group: ordinary messages.
  expect(dialogs.match(channel, 7, msg(102))).toBeUndefined();
  expect(dialogs.match(channel, 10, msg(103))).toBeUndefined();
  const found = dialogs.match(channel, 9, msg(104)) as { entry: never };
  const record = await dialogs.answer(found.entry, msg(104), "approve", { id: 9, name: "Rita" });
  expect(record.steps[0]?.answers).toEqual([
    { id: 104, text: "approve", timestamp: T0 / 1000, by: { id: 9, name: "Rita" } },
  ]);
  expect(dialogs.list()).toMatchObject([{ id: "100", awaiting: "a member of rm (not Rae)" }]);
  // While it waits there, a second question for others in that conversation is refused.
  expect(dialogs.busy(channel, 0, "200")).toBe(true);
});

it("a question for a role: taken from a person with that role or a more privileged one, as the users cache knows them", async () => {
  const roles = new Map<number, RoleName>([
    [7, "member"],
    [8, "moderator"],
    [9, "owner"],
  ]);
  const dialogs = memoryDialogs(new ManualClock(T0), new MemoryStore(), { roleOf: (id) => roles.get(id) });
  const channel = "channel:9:reports";
  const head = newHead({
    id: "100",
    userId: 7,
    userName: "Rae",
    conversation: channel,
    where: "#mods > reports",
    startedAt: T0,
  });
  const question = { ...asked(0, 101, T0, T0 + 60_000), from: { role: "moderator" as const } };
  await dialogs.append(head, [{ t: "start", origin: { id: 100 }, at: T0 }, question], true);
  expect(dialogs.list()).toMatchObject([{ awaiting: "a moderator or above" }]);
  // A member, and someone the users cache does not know: ordinary messages.
  expect(dialogs.match(channel, 7, msg(102))).toBeUndefined();
  expect(dialogs.match(channel, 12, msg(103))).toBeUndefined();
  expect(dialogs.match(channel, 9, msg(104))).toMatchObject({ entry: { id: "100" } });
});

/** Dialog 100 of user 7 (in group rm, excepted) in a channel topic, at a question for rm; `question`: its entry. */
async function askedOfOthers(dialogs: Dialogs, question: Partial<LogEntry & { t: "ask" }>) {
  const head = newHead({
    id: "100",
    userId: 7,
    userName: "Rae",
    conversation: "channel:9:deploys",
    where: "#ops > deploys",
    startedAt: T0,
  });
  const ask = {
    ...asked(0, 101, T0, T0 + 60_000),
    from: { group: "rm", except: [7] },
    ...question,
  } as LogEntry;
  await dialogs.append(head, [{ t: "start", origin: { id: 100 }, at: T0 }, ask], true);
}

it("the asker of a question for others reaches it with the cancel word its header keeps, and with nothing else", async () => {
  const inGroup = (g: string, id: number) => g === "rm" && [7, 9].includes(id);
  const store = new MemoryStore();
  await askedOfOthers(memoryDialogs(new ManualClock(T0), store, { inGroup }), { cancel: "withdraw" });
  // Read back at a start: the header alone says who a message goes to.
  const dialogs = memoryDialogs(new ManualClock(T0), store, { inGroup });
  await dialogs.load();
  const channel = "channel:9:deploys";
  expect(dialogs.match(channel, 7, msg(102), () => "approve")).toBeUndefined();
  expect(dialogs.match(channel, 7, msg(102), () => "withdraw it")).toBeUndefined();
  expect(dialogs.match(channel, 7, msg(102))).toBeUndefined();
  // Someone neither asked nor asking: the word is an ordinary message.
  expect(dialogs.match(channel, 10, msg(102), () => "withdraw")).toBeUndefined();
  const found = dialogs.match(channel, 7, msg(103), () => "Withdraw") as { entry: never };
  expect(found).toMatchObject({ entry: { id: "100" } });
  const record = await dialogs.answer(found.entry, msg(103), "Withdraw", { id: 7, name: "Rae" });
  const step = record.steps[0]!;
  expect(cancels(step, 7, step.answers[0]!, "withdraw")).toBe(true);
  // An answerer's word is no cancel: an ordinary answer.
  const answerer = { id: 104, text: "withdraw", timestamp: T0 / 1000, by: { id: 9 } };
  expect(cancels(step, 7, answerer, "withdraw")).toBe(false);
});

it("a question for others kept without its cancel word (before the asker could withdraw) behaves as before", async () => {
  const inGroup = (g: string, id: number) => g === "rm" && [7, 9].includes(id);
  const dialogs = memoryDialogs(new ManualClock(T0), new MemoryStore(), { inGroup });
  await askedOfOthers(dialogs, {});
  const channel = "channel:9:deploys";
  // The asker cannot withdraw it.
  expect(dialogs.match(channel, 7, msg(102), () => "cancel")).toBeUndefined();
  // An answerer's cancel word cancels it, as it did.
  const found = dialogs.match(channel, 9, msg(103), () => "cancel") as { entry: never };
  const record = await dialogs.answer(found.entry, msg(103), "cancel", { id: 9, name: "Rita" });
  expect(cancels(record.steps[0]!, 7, record.steps[0]!.answers[0]!, "cancel")).toBe(true);
});

/** A memory store whose next batch is applied and then answered with an error, as a lost reply. */
class LosingStore extends MemoryStore {
  loseNext = false;
  override namespace(name: string) {
    const view = super.namespace(name);
    const apply = view.applyWrites.bind(view);
    view.applyWrites = async (writes: readonly StoreWrite[], once?: OnceMarker) => {
      const applied = await apply(writes, once);
      if (this.loseNext) {
        this.loseNext = false;
        throw new StateError("STATE_UNAVAILABLE", "the connection closed before the reply (reply lost)");
      }
      return applied;
    };
    return view;
  }
}

it("a prompt's from and except are checked, naming what is wrong", async () => {
  const { waitFrom } = await import("../../src/pipeline/dialogs/ask-options.ts");
  expect(waitFrom(7, [3])).toEqual({ ids: [7], except: [3] });
  expect(waitFrom({ group: "rm" }, undefined)).toEqual({ group: "rm" });
  expect(waitFrom({ role: "admin" }, [3])).toEqual({ role: "admin", except: [3] });
  for (const [from, except, message] of [
    [
      { group: " " },
      undefined,
      "`from` must be a user id, a list of user ids, { group: name } with a name, or { role } with one of owner, admin, moderator, member, guest.",
    ],
    [{ role: "boss" }, undefined, "or { role } with one of"],
    [[7, -1], undefined, "`from` must be a user id"],
    [7, ["rae"], "`except` must be a list of user ids."],
    [undefined, [3], "`except` needs `from`"],
  ] as const) {
    expect(() => waitFrom(from as never, except as never)).toThrow(message);
  }
});

it("a move changes the place it names: the waiting question's, or the dialog's own while the question waits elsewhere", () => {
  const to = (key: string, topic: string) => ({
    key,
    label: `#general > ${topic}`,
    to: { channel: "general", channelId: 1, topic },
  });
  const home = newHead({
    id: "7",
    userId: 3,
    userName: "Mel",
    conversation: "channel:1:standup",
    where: "#general > standup",
    startedAt: 0,
  });
  const moved = headAfter(
    home,
    [{ t: "move", was: "channel:1:standup", to: to("channel:1:✔ standup", "✔ standup"), at: 1 }],
    10,
  );
  expect([moved.conversation, moved.where, moved.home]).toEqual([
    "channel:1:✔ standup",
    "#general > ✔ standup",
    undefined,
  ]);
  // Asked elsewhere: the header's conversation is the question's, the dialog's own is `home`.
  const elsewhere = {
    ...home,
    conversation: "channel:1:moods",
    where: "#general > moods",
    home: ["channel:1:standup", "#general > standup"] as [string, string],
  };
  const own = headAfter(
    elsewhere,
    [{ t: "move", was: "channel:1:standup", to: to("channel:1:✔ standup", "✔ standup"), at: 1 }],
    10,
  );
  expect([own.conversation, own.home]).toEqual([
    "channel:1:moods",
    ["channel:1:✔ standup", "#general > ✔ standup"],
  ]);
  // A move of neither place changes neither; the fold keeps every move for the sends.
  const other = headAfter(
    elsewhere,
    [{ t: "move", was: "channel:1:other", to: to("channel:1:x", "x"), at: 1 }],
    10,
  );
  expect([other.conversation, other.home]).toEqual([elsewhere.conversation, elsewhere.home]);
  const record = foldLog(home, [
    { t: "move", was: "channel:1:standup", to: to("channel:1:✔ standup", "✔ standup"), at: 1 },
  ]);
  expect(record.moves).toEqual([
    { from: "channel:1:standup", to: { channel: "general", channelId: 1, topic: "✔ standup" } },
  ]);
});

it("a start after the bot stopped here finds the dialogs whose logs the store lost, and only those", async () => {
  const store = new MemoryStore();
  const clock = new ManualClock(T0);
  const dialogs = memoryDialogs(clock, store);
  await waitAt(dialogs, { id: 100, conversation: CONVERSATION, at: T0, deadline: T0 + 60_000 });
  await waitAt(dialogs, { id: 200, conversation: "dm:3,8", at: T0, deadline: T0 + 60_000 });
  await waitAt(dialogs, { id: 300, conversation: "dm:3,9", at: T0, deadline: T0 + 60_000 });
  await dialogs.end("300", "operator", live);
  // The bot stops here (a lease lost), and the store loses dialog 100's keys meanwhile (a Redis
  // restarted without persistence); dialog 200's are kept, and ended dialog 300's header too.
  dialogs.pause();
  const ns = store.namespace("dialogs");
  for (const { key } of await ns.list("")) if (key.includes(":100")) await ns.delete(key);
  const { ready, lost } = await dialogs.load();
  expect(ready).toEqual([]);
  expect(lost.map((h) => [h.id, h.conversation, h.userId])).toEqual([["100", CONVERSATION, 7]]);
  expect(dialogs.entry("200")?.waiting).toBe(true);
  // A fresh process knew nothing to lose; nor does a load long after the stop (ended headers expire).
  expect((await memoryDialogs(clock, store).load()).lost).toEqual([]);
  dialogs.pause();
  for (const { key } of await ns.list("")) if (key.includes(":200")) await ns.delete(key);
  await clock.advance(8 * 86_400_000);
  expect((await dialogs.load()).lost).toEqual([]);
});

it("a prompt's texts.lost is kept in its question's header; an empty one is refused", () => {
  expect(escapesOf({ texts: { lost: "Lost: ask again." } }, 0)).toEqual({ lost: "Lost: ask again." });
  expect(() => escapesOf({ texts: { lost: " " } }, 0)).toThrow(/`texts.lost` must be a text/);
  const head = headAfter(
    newHead({
      id: "1",
      userId: 7,
      userName: "P",
      conversation: "dm:3,7",
      where: "direct message",
      startedAt: T0,
    }),
    [{ ...asked(0, 2, T0, T0 + 60_000), lost: "Lost: ask again." } as LogEntry],
    100,
  );
  expect(head.lost).toBe("Lost: ask again.");
});
