import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { code, filesUnder } from "../support/source-code.ts";

/** Each way of reading real time or waiting on it, by name. */
const READS = {
  "Date.now": /\bDate\.now\b/,
  "new Date()": /\bnew\s+Date\s*\(\s*\)/,
  timer:
    /(?<![\w$.])(?:setTimeout|setInterval|setImmediate)\s*\(|\bglobalThis\.set(?:Timeout|Interval|Immediate)\b|["']node:timers(?:\/promises)?["']/,
  "AbortSignal.timeout": /\bAbortSignal\.timeout\b/,
  "performance.now": /\bperformance\.now\b/,
} as const;

type Read = keyof typeof READS;

/** Where real time may be read (a file, or a folder ending in "/"), what, and why. */
const ALLOWED: { where: string; reads: readonly Read[]; why: string }[] = [
  {
    where: "time/clock.ts",
    reads: ["Date.now", "timer", "performance.now"],
    why: "the clock module: the real clock, and the monotonic reading that metrics durations use",
  },
  {
    where: "sandbox/",
    reads: ["Date.now", "timer", "AbortSignal.timeout"],
    why: "the stand-in chat server: it stamps messages with its own movable clock (core.clock), and its timers pace its HTTP as a server's would; no part of a bot",
  },
  {
    where: "cli/",
    reads: ["Date.now", "new Date()", "timer"],
    why: "the CLI speaks wall time to a person: backtest's --since, the schedule preview from now, the demo's pacing, dev's reload debounce",
  },
  {
    where: "cluster/lease-coordinator.ts",
    reads: ["timer", "performance.now"],
    why: "a lease is measured against the TTL of a Redis key, which runs on Redis's clock: monotonic real time is the only time both share, and no test clock moves Redis",
  },
  {
    where: "cluster/held-leases.ts",
    reads: ["timer", "performance.now"],
    why: "a held lease's validity and its watchdog are measured against the TTL of a Redis key, on Redis's clock: monotonic real time is the only time both share, and no test clock moves Redis",
  },
  {
    where: "state/redis-replication.ts",
    reads: ["timer"],
    why: "how many replicas a write must reach is counted again every few seconds on a live Redis connection; no test clock moves Redis's replication",
  },
  {
    where: "state/file-store.ts",
    reads: ["timer"],
    why: "the background flush paces disk writes (unref'd, so an open store never keeps the process alive); nothing a bot does waits on it",
  },
  {
    where: "http/budget-metrics.ts",
    reads: ["timer"],
    why: "setImmediate drops the budgets read for one /metrics scrape once the scrape's turn is over: no time is read or waited on",
  },
  {
    where: "testing/test-clock.ts",
    reads: ["Date.now", "timer"],
    why: "the testing kit's movable clock: real time plus the offset a test advances; it is the Clock tests hand the sandbox and the bot",
  },
  {
    where: "testing/ledger-watch.ts",
    reads: ["timer"],
    why: "bot.handled()'s limit is the test's own wall time: it must fail before vitest's test timeout, which real time drives",
  },
  {
    where: "bot/transpile-cache.ts",
    reads: ["Date.now"],
    why: "a cache entry's age is its file's modification time, which the file system stamps in wall time (a test sets it with utimes); nothing waits on it",
  },
  {
    where: "state/_files.ts",
    reads: ["new Date()"],
    why: "the lock file notes when the process took it, for a person deciding whether a lock is stale",
  },
];

const src = fileURLToPath(new URL("../../src/", import.meta.url));

/** Every read of real time in `text`: its kind and line. */
function readsIn(text: string): { read: Read; line: number }[] {
  const found: { read: Read; line: number }[] = [];
  for (const [i, line] of code(text).split("\n").entries()) {
    for (const [read, pattern] of Object.entries(READS) as [Read, RegExp][]) {
      if (pattern.test(line)) found.push({ read, line: i + 1 });
    }
  }
  return found;
}

function allowed(file: string, read: Read) {
  return ALLOWED.find(
    (a) => (a.where.endsWith("/") ? file.startsWith(a.where) : file === a.where) && a.reads.includes(read),
  );
}

const sources = () => filesUnder(src, (f) => f.endsWith(".ts"));

describe("time in src/", () => {
  it("finds every way of reading real time, and not the clock's own methods or comments", () => {
    const text = [
      "const a = Date.now();",
      "const b = new Date();",
      "setTimeout(f, 10);",
      "const c = AbortSignal.timeout(5);",
      "const d = performance.now();",
      "const now = options.now ?? Date.now;",
      "globalThis.setInterval(f, 1);",
      'import { setTimeout as wait } from "node:timers/promises";',
      "clock.setTimeout(f, 10); const e = new Date(ms); // setTimeout(f) in a comment",
      "/** @example Date.now() - 1 */",
    ].join("\n");
    expect(readsIn(text)).toEqual([
      { read: "Date.now", line: 1 },
      { read: "new Date()", line: 2 },
      { read: "timer", line: 3 },
      { read: "AbortSignal.timeout", line: 4 },
      { read: "performance.now", line: 5 },
      { read: "Date.now", line: 6 },
      { read: "timer", line: 7 },
      { read: "timer", line: 8 },
    ]);
  });

  it("is read only through the injected clock, outside the allowed modules", () => {
    const reads = sources().flatMap(({ file, text }) =>
      readsIn(text)
        .filter(({ read }) => !allowed(file, read))
        .map(
          ({ read, line }) => `src/${file}:${line} reads ${read}: take a Clock (src/time/clock.ts) instead`,
        ),
    );
    expect(reads).toEqual([]);
  });

  it("has no allowance left that nothing uses", () => {
    const all = sources();
    const unused = ALLOWED.flatMap((a) =>
      a.reads
        .filter(
          (read) =>
            !all.some(
              ({ file, text }) =>
                (a.where.endsWith("/") ? file.startsWith(a.where) : file === a.where) &&
                readsIn(text).some((r) => r.read === read),
            ),
        )
        .map((read) => `${a.where}: ${read}`),
    );
    expect(unused).toEqual([]);
  });
});
