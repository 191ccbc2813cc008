/**
 * Scheduler: 10,000 recurring jobs on one JobTimer with real cron expressions in three time
 * zones (most fire every 10 s, 30 s or minute, so a short run sees thousands of fires). Measures
 * the memory the jobs take, the CPU over the window (the jobs' no-op handlers included), and how
 * late each fire ran against its scheduled time.
 */
import { JobTimer } from "../lib/built.ts";
import { percentile, round, sleep } from "../lib/stats.ts";

export interface SchedulerResult {
  jobs: number;
  /** Distinct (cron, time zone) pairs among the jobs. */
  distinctSchedules: number;
  seconds: number;
  fires: number;
  latenessMs: { p50: number; p99: number; max: number };
  /** Heap and resident memory added by creating and starting the jobs. */
  heapMb: number;
  rssMb: number;
  addAndStartMs: number;
  cpuPercent: number;
}

const MIX: { share: number; cron: string }[] = [
  { share: 0.4, cron: "*/10 * * * * *" },
  { share: 0.3, cron: "15,45 * * * * *" },
  { share: 0.2, cron: "* * * * *" },
  // Office-hours jobs, each with its own time: 1,000 distinct expressions that do not fire here.
  { share: 0.1, cron: "distinct" },
];
const ZONES = ["UTC", "Europe/Berlin", "America/New_York"];

export async function runScheduler(
  options: { jobs: number; seconds: number },
  say: (line: string) => void,
): Promise<SchedulerResult> {
  const lateness: number[] = [];
  const heapBefore = process.memoryUsage();
  const started = performance.now();
  const timer = new JobTimer({ onError: () => {} });
  let n = 0;
  const distinct = new Set<string>();
  for (const { share, cron } of MIX) {
    const count = Math.round(options.jobs * share);
    for (let i = 0; i < count && n < options.jobs; i++, n++) {
      const expression = cron === "distinct" ? `${i % 60} ${Math.floor(i / 60) % 24} * * 1-5` : cron;
      distinct.add(`${expression} ${ZONES[n % ZONES.length]}`);
      timer.add({ id: `job-${n}`, cron: expression, timezone: ZONES[n % ZONES.length] as string }, (run) => {
        lateness.push(Date.now() - run.scheduledFor.getTime());
      });
    }
  }
  timer.start();
  const addAndStartMs = performance.now() - started;
  const after = process.memoryUsage();
  const cpu = process.cpuUsage();
  const windowStart = performance.now();
  // Under 10 s a window can hold no fire at all (from :21 to :29 none of the mix is due).
  await sleep(Math.max(options.seconds, 11) * 1000);
  const seconds = (performance.now() - windowStart) / 1000;
  const used = process.cpuUsage(cpu);
  await timer.stop(1000);
  const result: SchedulerResult = {
    jobs: n,
    distinctSchedules: distinct.size,
    seconds: round(seconds),
    fires: lateness.length,
    latenessMs: {
      p50: percentile(lateness, 50),
      p99: percentile(lateness, 99),
      max: percentile(lateness, 100),
    },
    heapMb: round((after.heapUsed - heapBefore.heapUsed) / 2 ** 20),
    rssMb: round((after.rss - heapBefore.rss) / 2 ** 20),
    addAndStartMs: round(addAndStartMs),
    cpuPercent: round((100 * (used.user + used.system)) / 1000 / (seconds * 1000), 3),
  };
  say(
    `  scheduler: ${n} jobs, ${result.fires} fires in ${result.seconds} s, lateness p50 ${result.latenessMs.p50} ms p99 ${result.latenessMs.p99} ms max ${result.latenessMs.max} ms, heap +${result.heapMb} MB, CPU ${result.cpuPercent}%`,
  );
  return result;
}
