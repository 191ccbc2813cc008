/**
 * `npm run bench [-- --quick] [--idle-seconds N] [--only e2e,dispatch,latency,scale,idle,scheduler,moderation,busy]`
 * `--busy-seconds N --busy-speed N --busy-rates 5,20`: the simulated length, the clock speed and the
 * message rates of the busy-organization rows (`--busy-rates ""`: the light-traffic row only);
 * `--light-rounds N --light-pings N --light-warmup N`: the light-traffic row's rounds, pings per
 * contender and round, and how many of each round's first pings are not counted; `--light-by-index`
 * prints each ping's delay by its index within its process (mean and max over the rounds), and
 * `--light-node-flags="--trace-gc ..."` passes Node flags to both contenders (for diagnosis), and
 * `--light-arrivals grid` sends the pings on a fixed 500 ms grid from each contender's start
 * instead of at random times (500 ms apart on average, the same times for both in a round);
 * `--idle-settle time`: the idle window starts 20 s after "daemon started" even if V8's post-start
 * collections have not run yet (default `reduced`: not before they have, in both processes).
 * `--only dialogs` (not in the default set, ~12 minutes): `--dialogs N` waiting dialogs (10,000) for
 * the memory row, a tenth of them for the latency row, over `--dialog-rounds N` (8).
 *
 * Runs each suite, prints a table with the machine it ran on, and writes
 * bench/results/<timestamp>.json. Not part of `npm test`: speed is measured here, never asserted.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, totalmem } from "node:os";
import { parseArgs } from "node:util";
import { runBusyOrg } from "./suites/busy-org.ts";
import { runDialogs } from "./suites/dialogs.ts";
import { runDispatch } from "./suites/dispatch.ts";
import { runE2e } from "./suites/e2e.ts";
import { runIdle } from "./suites/idle.ts";
import { runLatency } from "./suites/latency.ts";
import { runModeration } from "./suites/moderation.ts";
import { runScale } from "./suites/scale.ts";
import { runScheduler } from "./suites/scheduler.ts";
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
    "light-rounds": { type: "string" },
    "idle-settle": { type: "string" },
    "light-pings": { type: "string" },
    "light-warmup": { type: "string" },
    "light-by-index": { type: "boolean", default: false },
    "light-arrivals": { type: "string" },
    "light-node-flags": { type: "string" },
    dialogs: { type: "string" },
    "dialog-rounds": { type: "string" },
  },
});
const quick = values.quick ?? false;
const only = new Set((values.only ?? "e2e,dispatch,latency,scale,idle,scheduler,moderation,busy").split(","));
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
  results.scheduler = await runScheduler({ jobs: 10_000, seconds: quick ? 8 : idleSeconds }, say);
}
if (only.has("moderation")) {
  results.moderation = await runModeration({ seconds: quick ? 2 : 5 }, say);
}
if (only.has("dispatch")) {
  results.dispatch = await runDispatch(
    { events: quick ? 20_000 : 100_000, batch: 1000, rounds: Number(values.rounds ?? (quick ? 2 : 7)) },
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
  results.latency = await runLatency({ rates: [200, 2000], seconds: quick ? 2 : 10 }, say);
}
if (only.has("busy")) {
  results.busy = await runBusyOrg(
    {
      rates: (values["busy-rates"] ?? "5,20").split(",").filter(Boolean).map(Number),
      seconds: Number(values["busy-seconds"] ?? (quick ? 600 : 3600)),
      speed: Number(values["busy-speed"] ?? 20),
      lightRounds: Number(values["light-rounds"] ?? 4),
      lightPings: Number(values["light-pings"] ?? 40),
      lightWarmup: Number(values["light-warmup"] ?? 3),
      lightByIndex: values["light-by-index"] ?? false,
      lightNodeFlags: (values["light-node-flags"] ?? "").split(" ").filter(Boolean),
      lightArrivals: lightArrivals(values["light-arrivals"]),
    },
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
      settle: values["idle-settle"] === "time" ? "time" : "reduced",
    },
    say,
  );
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
