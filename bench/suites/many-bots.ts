/**
 * Many bots in a busy organization: `bots` bots in one `bothost run` (dist/), `allPublic` of them
 * with `all_public_streams` (moderation, welcome, relays: they see every public message), the
 * others each in one of 20 channels, while a member posts `rate` messages a second over those
 * channels for `seconds` simulated seconds, against the sandbox with the server's real limits
 * (bench/servers/many-bots-host.ts). Both processes run on the busy row's fast clock
 * (bench/lib/fast-clock.mjs), so lags are simulated ms: every real ms of processing counts
 * `speed` simulated ones, an upper bound. Reported: the daemon's CPU over the traffic (share of
 * one core, real time), its RSS (peak and at the end), each bot's lag p99 (from the message's
 * acceptance to its handler; the median and the worst bot), messages seen against those each bot
 * should see, 429s and the busiest minute of any bot's calls.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Child, forkChild } from "../lib/child.ts";
import { repoRoot, spawnDaemon, writeDaemonConfig } from "../lib/daemon-process.ts";
import { median, percentile, round } from "../lib/stats.ts";
import { withFastClock } from "./busy-org.ts";

export interface ManyBotsResult {
  bots: number;
  allPublic: number;
  rate: number;
  simulatedSeconds: number;
  speed: number;
  /** The daemon's CPU over the traffic, as a share of one core (real time). */
  cpuOfOneCore: number;
  rssMb: { peak: number; end: number };
  /** Each bot's lag p99 (simulated ms): the median over the bots, and the worst. */
  lagP99Ms: { median: number; worst: number; allPublicWorst: number };
  /** Messages handled against those the bots should have seen (channel members and all-public). */
  seen: number;
  expected: number;
  responses429: number;
  busiestMinute: { events: number; other: number };
}

const procStat = (pid: number) =>
  readFile(`/proc/${pid}/stat`, "utf8").then((s) => s.slice(s.lastIndexOf(")") + 2).split(" "));
/** utime + stime in ms (clock ticks of 10 ms). */
const cpuMs = async (pid: number) => {
  const f = await procStat(pid);
  return (Number(f[11]) + Number(f[12])) * 10;
};
const rssMb = async (pid: number) => {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
};

export async function runManyBots(
  o: { bots: number; allPublic: number; rate: number; seconds: number; speed: number },
  say: (line: string) => void,
): Promise<ManyBotsResult> {
  say(
    `many bots: ${o.bots} bots (${o.allPublic} with all_public_streams), ${o.rate} messages/s for ${o.seconds} simulated s at ${o.speed}× …`,
  );
  const t0 = Date.now();
  const dir = await mkdtemp(join(tmpdir(), "bothost-many-"));
  const lagFile = join(dir, "lag.json");
  let host: Child | undefined;
  let daemon: ReturnType<typeof spawnDaemon> | undefined;
  try {
    host = await withFastClock(o.speed, t0, () =>
      forkChild("servers/many-bots-host.ts", ["--bots", String(o.bots)]),
    );
    const ready = host.ready as {
      url: string;
      channels: number;
      bots: { email: string; apiKey: string; userId: number }[];
    };
    const config = join(dir, "bothost.yaml");
    await writeDaemonConfig(config, {
      url: ready.url,
      state: { path: join(dir, "state") },
      // "daemon started" is an info line.
      logLevel: "info",
      bots: ready.bots.map((b, i) => ({
        name: `b${i}`,
        module: join(repoRoot, "bench/e2e/lag-bot.mjs"),
        email: b.email,
        apiKey: b.apiKey,
        allPublicStreams: i < o.allPublic,
      })),
    });
    process.env.BENCH_LAG_FILE = lagFile;
    daemon = await withFastClock(o.speed, t0, async () => spawnDaemon(config));
    delete process.env.BENCH_LAG_FILE;
    await daemon.waitForLine((l) => l.msg === "daemon started", 300_000);
    const pid = daemon.pid;
    let peak = 0;
    const sampler = setInterval(() => {
      rssMb(pid).then(
        (mb) => {
          peak = Math.max(peak, mb);
        },
        () => {},
      );
    }, 1000);
    const cpuBefore = await cpuMs(pid);
    const wallBefore = performance.now();
    const run = await host.call<{
      sent: [number, number][];
      refused: number;
      busiestMinute: { events: number; other: number };
    }>("run", { rate: o.rate, seconds: o.seconds });
    const cpu = (await cpuMs(pid)) - cpuBefore;
    const wall = performance.now() - wallBefore;
    const end = await rssMb(pid);
    clearInterval(sampler);
    daemon.child.kill("SIGTERM");
    await daemon.exited;
    daemon = undefined;

    const sentAt = new Map(run.sent);
    const rows = JSON.parse(await readFile(lagFile, "utf8")) as [number, number, number][];
    const byBot = new Map<number, number[]>();
    for (const [bot, id, at] of rows) {
      const sent = sentAt.get(id);
      if (sent === undefined) continue;
      const list = byBot.get(bot) ?? [];
      list.push(at - sent);
      byBot.set(bot, list);
    }
    const seen = [...byBot.values()].reduce((n, l) => n + l.length, 0);
    // Bot i is in channel c<i mod 20>: the first `allPublic` see every message, the others 1/20.
    const expected =
      o.allPublic * run.sent.length + ((o.bots - o.allPublic) * run.sent.length) / ready.channels;
    const p99s = [...byBot.values()].map((l) => percentile(l, 99));
    // The all_public_streams bots are those that saw more than their own channel's share.
    const allPublicIds = [...byBot]
      .filter(([, l]) => l.length > (2 * run.sent.length) / ready.channels)
      .map(([b]) => b);
    const result: ManyBotsResult = {
      bots: o.bots,
      allPublic: o.allPublic,
      rate: o.rate,
      simulatedSeconds: o.seconds,
      speed: o.speed,
      cpuOfOneCore: round(cpu / wall, 3),
      rssMb: { peak: round(Math.max(peak, end)), end: round(end) },
      lagP99Ms: {
        median: round(median(p99s)),
        worst: round(Math.max(...p99s)),
        allPublicWorst: round(Math.max(...allPublicIds.map((b) => percentile(byBot.get(b) ?? [], 99)))),
      },
      seen,
      expected: Math.round(expected),
      responses429: run.refused,
      busiestMinute: run.busiestMinute,
    };
    say(
      `  ${result.bots} bots: CPU ${result.cpuOfOneCore} of one core, RSS ${result.rssMb.end} MB (peak ${result.rssMb.peak}), lag p99 per bot median ${result.lagP99Ms.median} ms, worst ${result.lagP99Ms.worst} ms (all-public worst ${result.lagP99Ms.allPublicWorst}); seen ${seen}/${result.expected}; ${run.refused} × 429; busiest minute of a bot: events ${run.busiestMinute.events}, other ${run.busiestMinute.other}`,
    );
    return result;
  } finally {
    daemon?.child.kill("SIGTERM");
    if (daemon) await daemon.exited;
    await host?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
