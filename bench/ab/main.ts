/**
 * `npm run bench:ab -- <distA> <distB> [--pairs 4] [--rounds 3] [--batch 1000]`
 *
 * Dispatch throughput of two builds side by side: build the commit before a change and copy its
 * dist/ to .ab/before (inside the checkout, so its imports find node_modules; .ab/ is ignored by
 * git), build the change, and compare .ab/before with dist. Each pair runs both
 * builds in fresh processes, in alternating order, so neither gets the warmer machine; the
 * result is the ratio of the medians (B/A > 1: B is faster). Two builds in one process were
 * not comparable: each slowed the other's shared code paths down.
 */
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { median, round } from "../lib/stats.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    pairs: { type: "string", default: "4" },
    rounds: { type: "string", default: "3" },
    batch: { type: "string", default: "1000" },
    events: { type: "string", default: "100000" },
  },
});
if (positionals.length !== 2) {
  process.stderr.write("usage: npm run bench:ab -- <distA> <distB> [--pairs N] [--rounds N] [--batch N]\n");
  process.exit(2);
}
const builds = positionals.map((p) => resolve(p)) as [string, string];
const roundScript = fileURLToPath(new URL("round.ts", import.meta.url));
const runs: Record<string, [number, number][]> = { [builds[0]]: [], [builds[1]]: [] };

for (let pair = 0; pair < Number(values.pairs); pair++) {
  const order = pair % 2 === 0 ? builds : ([builds[1], builds[0]] as const);
  for (const dist of order) {
    const out = execFileSync(
      process.execPath,
      [
        "--import",
        "jiti/register",
        roundScript,
        "--events",
        String(values.events),
        "--batch",
        String(values.batch),
        "--rounds",
        String(values.rounds),
      ],
      { env: { ...process.env, BOTHOST_BENCH_DIST: dist }, encoding: "utf8" },
    );
    runs[dist]?.push(...(JSON.parse(out.trim().split("\n").at(-1) ?? "[]") as [number, number][]));
  }
  process.stdout.write(`  pair ${pair + 1} done\n`);
}
const rate = (dist: string) => median((runs[dist] ?? []).map((r) => r[0]));
const cpu = (dist: string) => median((runs[dist] ?? []).map((r) => r[1]));
for (const [label, dist] of [
  ["A", builds[0]],
  ["B", builds[1]],
] as const) {
  process.stdout.write(
    `${label} ${dist}: ${rate(dist)} events/s, ${cpu(dist)} µs CPU/event (${runs[dist]?.length} rounds)\n`,
  );
}
process.stdout.write(`B/A events/s: ${round(rate(builds[1]) / rate(builds[0]), 3)}\n`);
