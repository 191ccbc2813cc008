/**
 * `npm run soak -- --minutes N [--bots 3] [--rate 0.8] [--no-announcements]`: build first (the
 * daemon runs from dist/), then soak. Exits 1 if a message was lost or duplicated.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { runSoak } from "./run-soak.ts";
import { formatSoakReport } from "./soak-report.ts";

const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "10" },
    bots: { type: "string", default: "3" },
    rate: { type: "string", default: "0.8" },
    "no-announcements": { type: "boolean", default: false },
  },
});
const minutes = Number(values.minutes);
if (!(minutes > 0)) {
  process.stderr.write(`--minutes must be a positive number, got ${values.minutes}\n`);
  process.exit(2);
}
const report = await runSoak({
  minutes,
  echoBots: Number(values.bots),
  ratePerBot: Number(values.rate),
  announcements: !values["no-announcements"],
  say: (line) => process.stdout.write(`${line}\n`),
});
process.stdout.write(`${formatSoakReport(report)}\n`);
const dir = new URL("../results/", import.meta.url);
await mkdir(dir, { recursive: true });
const file = new URL(`soak-${new Date().toISOString().replace(/[:.]/g, "-")}.json`, dir);
await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
process.stdout.write(`written: ${file.pathname}\n`);
const ok =
  report.replies.lost.length === 0 &&
  report.replies.duplicated.length === 0 &&
  report.replies.misrouted === 0;
process.exit(ok ? 0 : 1);
