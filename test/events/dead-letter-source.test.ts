/**
 * Retry requests reach running bots through one watcher per daemon: a bot's source keeps no timer,
 * looks once at start, then only when its bot's retry generation moved. The watcher reads every
 * bot's generation in one read: at once for a request made through the daemon, and every
 * RETRY_CHECK_MS only on a store other processes write to.
 */
import { getEventListeners, setMaxListeners } from "node:events";
import { pino } from "pino";
import { expect, it } from "vitest";
import { RETRY_CHECK_MS, RetryWatcher } from "../../src/daemon/retry-watcher.ts";
import { DeadLetterSource } from "../../src/events/dead-letter-source.ts";
import { DeadLetterOffice } from "../../src/state/dead-letter-office.ts";
import { type DeadLetter, DeadLetters } from "../../src/state/dead-letters.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";
import type { StateStore } from "../../src/state/state-store.ts";
import { realClock } from "../../src/time/clock.ts";
import { flushAsync, ManualClock } from "../support/manual-clock.ts";

const log = pino({ level: "silent" });

/** A store that counts the reads of keys ending in `suffix`, in any namespace. */
function countingStore(suffix: string): { store: StateStore; reads: () => number } {
  let reads = 0;
  const wrap = (view: StateStore): StateStore =>
    new Proxy(view, {
      get(target, prop, receiver) {
        if (prop === "get")
          return (key: string) => {
            if (key.endsWith(suffix)) reads++;
            return target.get(key);
          };
        if (prop === "namespace") return (name: string) => wrap(target.namespace(name));
        return Reflect.get(target, prop, receiver);
      },
    });
  return { store: wrap(new MemoryStore()), reads: () => reads };
}

function failure(n: number) {
  return {
    source: "queue" as const,
    event: { id: n },
    error: new Error(`failed ${n}`),
    attempts: 1,
    firstFailedAt: "2026-11-26T10:00:00.000Z",
    lastFailedAt: "2026-11-26T10:00:00.000Z",
  };
}

/** Starts a source for `bot` whose replays are recorded in `replayed`. */
async function startSource(office: DeadLetterOffice, bot: string, watcher: RetryWatcher, stop: AbortSignal) {
  const replayed: string[] = [];
  const source = new DeadLetterSource({
    letters: office.of(bot),
    dispatcher: {
      replay: async (letter: DeadLetter) => {
        replayed.push(letter.id);
        await office.of(bot).remove(letter.id);
        return true;
      },
    } as never,
    replayJob: async () => true,
    log,
    signal: stop,
    requests: watcher,
  });
  await source.start();
  return replayed;
}

function officeOn(store: StateStore, bots: string[]) {
  return new DeadLetterOffice(store, new Map(bots.map((b) => [b, { max: 10 }])), realClock);
}

it("an idle daemon on its own store keeps no timer; a retry through it replays at once", async () => {
  const clock = new ManualClock();
  const store = new MemoryStore();
  const watcher = new RetryWatcher({ store, shared: false, clock, log });
  const office = officeOn(store, ["a", "b"]);
  watcher.serve(office);
  await office.of("a").add(failure(1));
  const stop = new AbortController();
  const replayedA = await startSource(office, "a", watcher, stop.signal);
  const replayedB = await startSource(office, "b", watcher, stop.signal);
  expect(clock.pendingTimers).toBe(0);
  expect(getEventListeners(stop.signal, "abort")).toHaveLength(2);

  await office.retry({ ids: ["a/1"] });
  await flushAsync();
  expect(replayedA).toEqual(["a/1"]);
  expect(replayedB).toEqual([]);
  expect(clock.pendingTimers).toBe(0);

  stop.abort();
  expect(watcher.watching).toBe(0);
});

it("a retry's outcome names the letters of the bots that do not run in this daemon", async () => {
  const clock = new ManualClock();
  const store = new MemoryStore();
  const watcher = new RetryWatcher({ store, shared: true, clock, log });
  const office = officeOn(store, ["here", "there"]);
  watcher.serve(office);
  await office.of("here").add(failure(1));
  await office.of("there").add(failure(1));
  const stop = new AbortController();
  const replayed = await startSource(office, "here", watcher, stop.signal);

  expect(await office.retry({ ids: ["here/1", "there/1"] })).toEqual({
    done: ["here/1", "there/1"],
    missing: [],
    elsewhere: ["there/1"],
  });
  await flushAsync();
  expect(replayed).toEqual(["here/1"]);
  stop.abort();
  // Stopped here: its letters wait for wherever it runs next.
  await office.of("here").add(failure(2));
  expect(await office.retry({ ids: ["here/2"] })).toEqual({
    done: ["here/2"],
    missing: [],
    elsewhere: ["here/2"],
  });
});

it("on a shared store one read per period serves every bot, and finds a request another process wrote", async () => {
  const clock = new ManualClock();
  const { store, reads } = countingStore("retry-generations");
  const watcher = new RetryWatcher({ store, shared: true, clock, log });
  const bots = Array.from({ length: 50 }, (_, i) => `bot-${i}`);
  const office = officeOn(store, bots);
  const stop = new AbortController();
  setMaxListeners(bots.length, stop.signal);
  const replayed = await Promise.all(bots.map((bot) => startSource(office, bot, watcher, stop.signal)));
  const atStart = reads();
  expect(clock.pendingTimers).toBe(1);

  await clock.tick(RETRY_CHECK_MS * 5);
  expect(reads() - atStart).toBe(5);

  // Another process (here: another office on the same store, no link to this watcher) asks.
  const other = officeOn(store, bots);
  await office.of("bot-7").add(failure(1));
  await other.retry({ ids: ["bot-7/1"] });
  expect(replayed[7]).toEqual([]);
  await clock.tick(RETRY_CHECK_MS);
  expect(replayed[7]).toEqual(["bot-7/1"]);
  expect(replayed.flat()).toEqual(["bot-7/1"]);

  stop.abort();
  await clock.tick(RETRY_CHECK_MS);
  expect(clock.pendingTimers).toBe(0);
});

it("a request made while the bot starts is not missed", async () => {
  const clock = new ManualClock();
  const store = new MemoryStore();
  const watcher = new RetryWatcher({ store, shared: false, clock, log });
  const office = officeOn(store, ["a"]);
  watcher.serve(office);
  await office.of("a").add(failure(1));
  await office.of("a").add(failure(2));
  await office.retry({ ids: ["a/1"] });
  const stop = new AbortController();
  const replayed = await startSource(office, "a", watcher, stop.signal);
  expect(replayed).toEqual(["a/1"]);
  await office.retry({ ids: ["a/2"] });
  await flushAsync();
  expect(replayed).toEqual(["a/1", "a/2"]);
  expect(await new DeadLetters(store, "a", { max: 10 }).retryGeneration()).toBe(2);
  stop.abort();
});

it("a bot's letters are replayed one at a time, and one dropped before its turn is not replayed", async () => {
  const clock = new ManualClock();
  const store = new MemoryStore();
  const watcher = new RetryWatcher({ store, shared: false, clock, log });
  const office = officeOn(store, ["a"]);
  watcher.serve(office);
  for (let n = 1; n <= 3; n++) await office.of("a").add(failure(n));
  const begun: string[] = [];
  const finish: Array<() => void> = [];
  const stop = new AbortController();
  const source = new DeadLetterSource({
    letters: office.of("a"),
    dispatcher: {
      replay: (letter: DeadLetter) => {
        begun.push(letter.id);
        return new Promise<boolean>((resolve) => {
          finish.push(
            () =>
              void office
                .of("a")
                .remove(letter.id)
                .then(() => resolve(true)),
          );
        });
      },
    } as never,
    replayJob: async () => true,
    log,
    signal: stop.signal,
    requests: watcher,
  });
  await source.start();
  await office.retry({ all: true });
  await flushAsync();
  expect(begun).toEqual(["a/1"]);
  await office.drop({ ids: ["a/2"] });
  finish.shift()?.();
  await flushAsync();
  expect(begun).toEqual(["a/1", "a/3"]);
  finish.shift()?.();
  await flushAsync();
  expect(await office.of("a").list()).toEqual([]);
  stop.abort();
});
