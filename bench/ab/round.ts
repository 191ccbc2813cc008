/**
 * One side of `npm run bench:ab`: the build in BOTHOST_BENCH_DIST against the dispatch suite's
 * event server, a whole warm-up round, then `--rounds` timed rounds (registered queue → last
 * event, as in suites/dispatch.ts). Prints one JSON line: [events/s, µs CPU per event] per round.
 */
import { parseArgs } from "node:util";
import { forkChild } from "../lib/child.ts";
import { startBenchRuntime } from "../lib/runtime.ts";

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "100000" },
    batch: { type: "string", default: "1000" },
    rounds: { type: "string", default: "3" },
  },
});
const events = Number(values.events);
const server = await forkChild("servers/event-server.ts", [
  "--total",
  String(events),
  "--batch",
  String(values.batch),
]);
const url = `http://127.0.0.1:${server.ready.port as number}`;

async function round(): Promise<[number, number]> {
  let handled = 0;
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  const bench = await startBenchRuntime({
    url,
    email: `limit-${events}@bench.example`,
    apiKey: "BenchKey0123456789abcdefABCDEFGH",
    setup: (bot) => {
      bot.on("message", () => {
        if (++handled === events) done();
      });
    },
  });
  await bench.runtime.start();
  const before = handled;
  const cpu = process.cpuUsage();
  const started = performance.now();
  await finished;
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  await bench.close();
  const counted = events - before;
  return [Math.round(counted / seconds), Number(((used.user + used.system) / counted).toFixed(3))];
}

await round(); // warm-up
const results: [number, number][] = [];
for (let i = 0; i < Number(values.rounds); i++) results.push(await round());
process.stdout.write(`${JSON.stringify(results)}\n`);
await server.stop();
process.exit(0);
