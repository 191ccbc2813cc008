/**
 * `npm run bench [-- --quick] [--idle-seconds N] [--only queue,dispatch,latency,scale,idle,scheduler,moderation,redis,busy,many,e2e,replica]`
 * (`e2e`, the fixed-batch rows, runs only when named)
 * `--busy-seconds N --busy-speed N --busy-rates 5,20`: the simulated length, the clock speed and the
 * message rates of the busy-organization rows; `--many-speed N` the clock speed of the many-bots row
 * (default 4) (`--busy-rates ""`: the light-traffic row only);
 * `--light-rounds N --light-pings N --light-warmup N`: the light-traffic row's rounds, pings per
 * contender and round, and how many of each round's first pings are not counted; `--light-by-index`
 * prints each ping's delay by its index within its process (mean and max over the rounds), and
 * `--light-node-flags="--trace-gc ..."` passes Node flags to both contenders (for diagnosis), and
 * `--light-arrivals grid` sends the pings on a fixed 500 ms grid from each contender's start
 * instead of at random times (500 ms apart on average, the same times for both in a round);
 * `--idle-settle time`: the idle window starts 20 s after "daemon started" even if V8's post-start
 * collections have not run yet (default `reduced`: not before they have, in both processes).
 * `--queue-loads burst`: only the queue rows whose name contains one of the comma-separated words.
 * `--only dialogs` (not in the default set, ~12 minutes): `--dialogs N` waiting dialogs (10,000) for
 * the memory row, a tenth of them for the latency row, over `--dialog-rounds N` (8); each daemon
 * started alone on its state `--start-rounds N` times (5), alternating which first.
 * `--only start` (not in the default set, ~1 minute): `bothost run` to "daemon started", cold, with
 *   one TypeScript bot, `--rounds N` (15); with BENCH_CLI_BASELINE another build in the same rounds.
 * `--only calls` (not in the default set, ~20 s; needs redis-server): store calls per dialog answer on Redis.
 * `--only helpers` (not in the default set, ~40 s; needs redis-server): store calls, API requests
 *   and time per message of a handler that makes one helper call, against one that only replies.
 * `--only progress` (not in the default set, ~2 minutes): `--progress-tasks N` concurrent progress
 * messages (100) on one bot, each streaming 2,000 chunks over 60 s.
 *
 * Runs each suite, prints a table with the machine it ran on, and writes
 * bench/results/<timestamp>.json. Not part of `npm test`: speed is measured here, never asserted.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, totalmem } from "node:os";
import { parseArgs } from "node:util";
import { runBusyOrg } from "./suites/busy-org.ts";
import { runDialogCalls } from "./suites/dialog-calls.ts";
import { runDialogs } from "./suites/dialogs.ts";
import { runDispatch } from "./suites/dispatch.ts";
import { runE2e } from "./suites/e2e.ts";
import { runHelperCalls } from "./suites/helper-calls.ts";
import { runIdle } from "./suites/idle.ts";
import { runLatency } from "./suites/latency.ts";
import { runManyBots } from "./suites/many-bots.ts";
import { runModeration } from "./suites/moderation.ts";
import { runProgress } from "./suites/progress.ts";
import { runQueue } from "./suites/queue.ts";
import { runRedisList } from "./suites/redis-list.ts";
import { runReplicaWait } from "./suites/replica-wait.ts";
import { runScale } from "./suites/scale.ts";
import { runScheduler } from "./suites/scheduler.ts";
import { runStart } from "./suites/start.ts";
import { formatTable } from "./table.ts";

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    "idle-seconds": { type: "string" },
    only: { type: "string" },
    rounds: { type: "string" },
    bots: { type: "string" },
    "busy-seconds": { type: "string" },
    "busy-speed": { type: "string" },
    "busy-rates": { type: "string" },
    "many-speed": { type: "string" },
    "light-rounds": { type: "string" },
    "idle-settle": { type: "string" },
    "light-pings": { type: "string" },
    "light-warmup": { type: "string" },
    "light-by-index": { type: "boolean", default: false },
    "light-arrivals": { type: "string" },
    "light-node-flags": { type: "string" },
    dialogs: { type: "string" },
    "queue-loads": { type: "string" },
    "dialog-rounds": { type: "string" },
    "start-rounds": { type: "string" },
    "progress-tasks": { type: "string" },
  },
});
const quick = values.quick ?? false;
const only = new Set(
  (values.only ?? "queue,dispatch,latency,scale,idle,scheduler,moderation,redis,busy,many").split(","),
);
const idleSeconds = Number(values["idle-seconds"] ?? (quick ? 5 : 60));
const say = (line: string) => process.stdout.write(`${line}\n`);

function lightArrivals(value: string | undefined): "random" | "grid" {
  if (value === undefined || value === "random" || value === "grid") return value ?? "random";
  say(`--light-arrivals: "${value}" is not one of random, grid`);
  process.exit(2);
}

const machine = {
  cpu: cpus()[0]?.model ?? "unknown",
  cores: cpus().length,
  memoryGb: Math.round(totalmem() / 2 ** 30),
  node: process.version,
  platform: `${process.platform}-${process.arch}`,
};
say(
  `bench on ${machine.cpu} × ${machine.cores}, ${machine.memoryGb} GB, Node ${machine.node}${quick ? " (quick)" : ""}`,
);
const started = Date.now();
const results: Record<string, unknown> = { machine, quick, startedAt: new Date(started).toISOString() };

// The in-process suites first, while this process is fresh: the others leave garbage (the
// scale suite's sandbox holds 1,000 accounts) whose collection showed up as timer lateness.
if (only.has("scheduler")) {
  results.scheduler = await runScheduler({ jobs: 10_000, seconds: quick ? 11 : idleSeconds }, say);
}
if (only.has("moderation")) {
  results.moderation = await runModeration({ seconds: quick ? 2 : 5 }, say);
}
if (only.has("redis")) {
  results.redis = await runRedisList(
    { unrelated: quick ? 100_000 : 1_000_000, calls: quick ? 50 : 200 },
    say,
  );
}
if (only.has("replica")) {
  results.replica = await runReplicaWait(
    { rate: 1_000, seconds: quick ? 3 : 10, rounds: Number(values.rounds ?? (quick ? 1 : 3)) },
    say,
  );
}
if (only.has("calls")) {
  results.calls = await runDialogCalls({ steps: [3, 12] }, say);
}
if (only.has("helpers")) {
  results.helpers = await runHelperCalls({ messages: quick ? 3 : 9 }, say);
}
if (only.has("dispatch")) {
  results.dispatch = await runDispatch(
    { events: quick ? 20_000 : 100_000, batch: 1000, rounds: Number(values.rounds ?? (quick ? 2 : 7)) },
    say,
  );
}
const queueLoads = values["queue-loads"]?.split(",");
if (only.has("queue")) {
  results.queue = await runQueue(
    {
      rounds: Number(values.rounds ?? (quick ? 1 : 3)),
      loads: [
        { name: "sustained 100/s", rate: 100, seconds: quick ? 3 : 10, burst: 0 },
        { name: "sustained 1000/s", rate: 1000, seconds: quick ? 3 : 10, burst: 0 },
        { name: "sustained 5000/s", rate: 5000, seconds: quick ? 2 : 6, burst: 0 },
        { name: "burst 20000", rate: 0, seconds: 0, burst: 20_000 },
        { name: "burst 20000, async handler", rate: 0, seconds: 0, burst: 20_000, handler: "async" as const },
        {
          name: "burst 20000, awaits ctx.state.get",
          rate: 0,
          seconds: 0,
          burst: 20_000,
          handler: "state" as const,
        },
      ].filter((load) => queueLoads === undefined || queueLoads.some((word) => load.name.includes(word))),
    },
    say,
  );
}
if (only.has("e2e")) {
  const rounds = Number(values.rounds ?? (quick ? 2 : 5));
  results.e2e = await runE2e(
    {
      rounds,
      sizes: quick
        ? [
            { batch: 100, events: 5_000 },
            { batch: 1000, events: 20_000 },
          ]
        : // 100 polls each: within the server's 200 requests a minute, which GET /events counts against.
          [
            { batch: 100, events: 10_000 },
            { batch: 1000, events: 100_000 },
          ],
    },
    say,
  );
}
if (only.has("latency")) {
  results.latency = await runLatency({ rates: quick ? [200] : [200, 2000], seconds: quick ? 2 : 10 }, say);
}
if (only.has("busy")) {
  results.busy = await runBusyOrg(
    {
      rates: (values["busy-rates"] ?? (quick ? "20" : "5,20")).split(",").filter(Boolean).map(Number),
      seconds: Number(values["busy-seconds"] ?? (quick ? 300 : 3600)),
      speed: Number(values["busy-speed"] ?? 20),
      // The light row runs in real time: 4 rounds × 2 contenders × 40 pings 500 ms apart took
      // 165 s of a quick run.
      lightRounds: Number(values["light-rounds"] ?? (quick ? 2 : 4)),
      lightPings: Number(values["light-pings"] ?? (quick ? 10 : 40)),
      lightWarmup: Number(values["light-warmup"] ?? (quick ? 2 : 3)),
      lightByIndex: values["light-by-index"] ?? false,
      lightNodeFlags: (values["light-node-flags"] ?? "").split(" ").filter(Boolean),
      lightArrivals: lightArrivals(values["light-arrivals"]),
    },
    say,
  );
}
if (only.has("start")) {
  results.start = await runStart({ rounds: Number(values.rounds ?? (quick ? 3 : 15)) }, say);
}
if (only.has("many")) {
  results.many = await runManyBots(
    quick
      ? { bots: 50, allPublic: 5, rate: 20, seconds: 120, speed: 10 }
      : // At 20× the sandbox, one process serving 200 queues, fell behind (a quarter of the
        // messages still unread at the end); at 4× it keeps up.
        { bots: 200, allPublic: 10, rate: 20, seconds: 600, speed: Number(values["many-speed"] ?? 4) },
    say,
  );
}
if (only.has("scale")) {
  results.scale = await runScale({ bots: Number(values.bots ?? (quick ? 100 : 1000)), idleSeconds }, say);
}
if (only.has("idle")) {
  const bots = Number(values.bots ?? (quick ? 100 : 1000));
  results.idle = await runIdle(
    {
      bots,
      idleSeconds,
      settleSeconds: quick ? 5 : 20,
      heartbeatSeconds: quick ? 2 : 50,
      // Waiting for V8's post-start collections took up to 150 s of a quick run.
      settle: (values["idle-settle"] ?? (quick ? "time" : "reduced")) === "time" ? "time" : "reduced",
    },
    say,
  );
}
if (only.has("progress")) {
  const tasks = Number(values["progress-tasks"] ?? (quick ? 20 : 100));
  results.progress = await runProgress({ tasks, chunks: 2_000, seconds: quick ? 20 : 60 }, say);
}
if (only.has("dialogs")) {
  const dialogs = Number(values.dialogs ?? (quick ? 1_000 : 10_000));
  results.dialogs = await runDialogs(
    {
      dialogs,
      waiting: Math.round(dialogs / 10),
      rate: 500,
      settleSeconds: quick ? 5 : 20,
      rounds: Number(values["dialog-rounds"] ?? (quick ? 2 : 8)),
      pings: 40,
      startRounds: Number(values["start-rounds"] ?? (quick ? 3 : 5)),
    },
    say,
  );
}
results.totalSeconds = Math.round((Date.now() - started) / 1000);

say("");
say(formatTable(results));
const dir = new URL("results/", import.meta.url);
await mkdir(dir, { recursive: true });
const file = new URL(`${new Date(started).toISOString().replace(/[:.]/g, "-")}.json`, dir);
await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
say(`\nwritten: ${file.pathname}`);
// zulip-js keeps a poll parked on the event server that nothing can cancel.
process.exit(0);
