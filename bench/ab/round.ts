/**
 * One side of `npm run bench:ab`: the build in BOTHOST_BENCH_DIST against the dispatch suite's
 * event server, a whole warm-up round, then `--rounds` timed rounds (registered queue → last
 * event, as in suites/dispatch.ts). Prints one JSON line: [events/s, µs CPU per event] per round.
 */
import { parseArgs } from "node:util";
import { forkChild } from "../lib/child.ts";
import { bothost } from "../suites/dispatch.ts";

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
  const t = await bothost(url, events);
  return [Math.round(t.events / (t.ms / 1000)), Number(((t.cpu.user + t.cpu.system) / t.events).toFixed(3))];
}

await round(); // warm-up
const results: [number, number][] = [];
for (let i = 0; i < Number(values.rounds); i++) results.push(await round());
process.stdout.write(`${JSON.stringify(results)}\n`);
await server.stop();
process.exit(0);
