/**
 * Waiting dialogs (`ctx.prompt`): what they cost a daemon, whole processes, cold, each against a
 * baseline in the same run. The bot (bench/e2e/dialog-bot.mjs) runs in `bothost run` from dist/
 * against the sandbox (bench/servers/dialog-host.ts, its own process, the server's rate limits
 * on, the bots' accounts given 100,000 calls a minute as an administrator can, and the daemon's
 * config saying so). Every dialog is opened for real: a member's "ask" in a topic of its own, the
 * bot's first question posted, its record written by the daemon.
 *
 * Memory: (a) the bot answered N "hi" messages with a reply and holds no dialog; (b) the same
 * bot in another daemon answered N "ask" with a question and holds N waiting dialogs. Both
 * measured over the same window: RSS after `settle` seconds, then RSS and V8's used heap after
 * forced full collections (bench/lib/gc-probe.mjs); then the time from an answer's posting to the
 * next question, 1 dialog waiting (a) against N (b), interleaved; then both daemons restarted on
 * their state (the N records read back at start) and measured again; then each started alone on
 * its state, `startRounds` times, alternating which goes first (one start each is at the mercy of
 * the moment), the start taken as the median.
 *
 * Latency: a command's answer delay while W dialogs wait against none, light traffic (pings at
 * random times, 500 ms apart on average, the same times for both in a round), one process of each
 * per round, alternating which goes first; both first answer W messages (with a question, or with
 * a reply). p50, p99, and a 95% interval for the difference at p99 from resampling whole rounds.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Child, forkChild } from "../lib/child.ts";
import { type DaemonProcess, repoRoot, spawnDaemon, writeDaemonConfig } from "../lib/daemon-process.ts";
import { rssBytes } from "../lib/proc.ts";
import { median, percentile, round, sleep } from "../lib/stats.ts";
import { p99DiffInterval } from "./busy-org.ts";

const LIMITS = { perMinute: 100_000, perHour: 1_000_000 };
const probe = fileURLToPath(new URL("../lib/gc-probe.mjs", import.meta.url));
const module = join(repoRoot, "bench/e2e/dialog-bot.mjs");
const mb = (bytes: number) => round(bytes / 2 ** 20, 4);

export interface DialogMemory {
  /** RSS after settling (MB). */
  rssMb: number;
  /**
   * RSS after forced full collections, once it stopped falling (V8 unmaps the pages they freed
   * over the following seconds): no fall of 0.5 MB in either process over 5 s, or 60 s.
   */
  rssAfterGcMb: number;
  /** V8's used heap right after them. */
  heapAfterGcMb: number;
}

/** Resolves once neither process's RSS fell by 0.5 MB over the last 5 s, or after 60 s. */
async function released(pair: { plain: Daemon; dialogs: Daemon }): Promise<void> {
  const seen: number[][] = [];
  for (let s = 0; s < 60; s++) {
    await sleep(1000);
    seen.push([pair.plain.rss(), pair.dialogs.rss()]);
    const before = seen.at(-6);
    const now = seen.at(-1) as number[];
    if (before?.every((v, i) => v - (now[i] as number) < 0.5 * 2 ** 20)) return;
  }
}

/** Both daemons' memory over the same window: RSS now, then after full collections in each. */
async function measure(pair: { plain: Daemon; dialogs: Daemon }) {
  const settled = { plain: pair.plain.rss(), dialogs: pair.dialogs.rss() };
  const heap = { plain: await pair.plain.collect(), dialogs: await pair.dialogs.collect() };
  await released(pair);
  const side = (who: "plain" | "dialogs"): DialogMemory => ({
    rssMb: mb(settled[who]),
    rssAfterGcMb: mb(pair[who].rss()),
    heapAfterGcMb: mb(heap[who]),
  });
  return { plain: side("plain"), dialogs: side("dialogs") };
}

export interface DialogsResult {
  dialogs: number;
  /** Seconds to open the N dialogs (b) and to answer the N plain messages (a). */
  openSeconds: { plain: number; dialogs: number };
  settleSeconds: number;
  running: { plain: DialogMemory; dialogs: DialogMemory };
  /** Answer to next question (ms): 1 dialog waiting (a) and N (b), median and max of each. */
  resumeMs: { one: { p50: number; max: number }; many: { p50: number; max: number }; samples: number };
  /** After a restart on the same state: start (spawn to "daemon started", s) and memory. */
  restarted: {
    plain: DialogMemory & { startSeconds: number };
    dialogs: DialogMemory & { startSeconds: number };
  };
  /** Each daemon started alone on its state, alternating which first: spawn to "daemon started" (s). */
  starts: { plain: number[]; dialogs: number[]; ratio: number };
  /** Absent with `--dialog-rounds 0`. */
  latency?: {
    waiting: number;
    rounds: number;
    pings: number;
    none: { p50: number; p99: number };
    waitingDialogs: { p50: number; p99: number };
    p99DiffMs: number;
    p99DiffInterval: [number, number];
  };
}

interface Bot {
  channel: string;
  email: string;
  apiKey: string;
  name: string;
}

class Daemon {
  private constructor(
    readonly process: DaemonProcess,
    readonly startSeconds: number,
  ) {}

  static async start(dir: string, url: string, bot: Bot): Promise<Daemon> {
    const config = join(dir, "bothost.yaml");
    await writeDaemonConfig(config, {
      url,
      state: { path: join(dir, "state") },
      bots: [{ name: "dialogs", module, email: bot.email, apiKey: bot.apiKey, rateLimit: LIMITS }],
    });
    const from = performance.now();
    const daemon = spawnDaemon(config, undefined, ["--expose-gc", "--import", probe]);
    await daemon
      .waitForLine((l) => l.msg === "daemon started", 300_000)
      .catch((err: Error) => {
        throw new Error(`${err.message}; its log: ${JSON.stringify(daemon.lines.slice(-5))}`);
      });
    return new Daemon(daemon, round((performance.now() - from) / 1000));
  }

  rss(): number {
    return rssBytes(this.process.pid) ?? Number.NaN;
  }

  /** Full collections in the process (bench/lib/gc-probe.mjs); resolves with its used heap after them. */
  async collect(): Promise<number> {
    const seen = this.process.lines.length;
    this.process.child.kill("SIGUSR2");
    const line = await this.process.waitForLine(
      (l) => l.msg === "bench gc" && this.process.lines.indexOf(l) >= seen,
      30_000,
    );
    return Number(line.heapUsed);
  }

  async stop(): Promise<void> {
    this.process.child.kill("SIGTERM");
    await this.process.exited;
  }
}

type Exchange = { ms: number; topic: string; content: string };

/** Send `content` in `topic`; the bot's next message must be `expect` in that topic. */
async function exchange(
  host: Child,
  bot: Bot,
  topic: string,
  content: string,
  expect: string,
): Promise<number> {
  const got = await host.call<Exchange>("exchange", { channel: bot.channel, topic, content });
  if (got.topic !== topic || !got.content.includes(expect))
    throw new Error(`"${content}" in ${topic}: the bot's next message was "${got.content}" in ${got.topic}`);
  return got.ms;
}

async function memoryRows(
  host: Child,
  url: string,
  options: {
    dialogs: number;
    rate: number;
    settleSeconds: number;
    resumeSamples: number;
    startRounds: number;
  },
  say: (line: string) => void,
) {
  const bots = {
    plain: await host.call<Bot>("bot", {
      channel: "plain",
      email: "plain@sandbox.example",
      name: "Plain Bot",
      ...LIMITS,
    }),
    dialogs: await host.call<Bot>("bot", {
      channel: "dialogs",
      email: "dialogs@sandbox.example",
      name: "Dialog Bot",
      ...LIMITS,
    }),
  };
  const dirs = {
    plain: await mkdtemp(join(tmpdir(), "bothost-dlg-")),
    dialogs: await mkdtemp(join(tmpdir(), "bothost-dlg-")),
  };
  const running = { plain: undefined as Daemon | undefined, dialogs: undefined as Daemon | undefined };
  try {
    running.plain = await Daemon.start(dirs.plain, url, bots.plain);
    running.dialogs = await Daemon.start(dirs.dialogs, url, bots.dialogs);
    const n = options.dialogs;
    const plainOpen = await host.call<{ seconds: number }>("open", {
      channel: bots.plain.channel,
      prefix: "p-",
      count: n,
      content: "hi",
      rate: options.rate,
    });
    const dialogsOpen = await host.call<{ seconds: number }>("open", {
      channel: bots.dialogs.channel,
      prefix: "d-",
      count: n,
      content: "ask",
      rate: options.rate,
    });
    say(
      `  dialogs: ${n} answered in ${round(plainOpen.seconds)} s (a), ${n} dialogs opened in ${round(dialogsOpen.seconds)} s (b)`,
    );
    await sleep(options.settleSeconds * 1000);
    const memory = await measure({ plain: running.plain, dialogs: running.dialogs });
    // Resuming: a's one dialog at a time (opened, timed at its second question, finished), b's
    // first few of N (each then waits at its second question: N still wait).
    const one: number[] = [];
    const many: number[] = [];
    for (let k = 0; k < options.resumeSamples; k++) {
      await exchange(host, bots.plain, `one-${k}`, "ask", "yesterday");
      one.push(await exchange(host, bots.plain, `one-${k}`, "fine", "today"));
      await exchange(host, bots.plain, `one-${k}`, "fine", "thanks");
      many.push(await exchange(host, bots.dialogs, `d-${k}`, "fine", "today"));
    }
    await running.plain.stop();
    await running.dialogs.stop();
    running.plain = await Daemon.start(dirs.plain, url, bots.plain);
    running.dialogs = await Daemon.start(dirs.dialogs, url, bots.dialogs);
    await sleep(options.settleSeconds * 1000);
    const after = await measure({ plain: running.plain, dialogs: running.dialogs });
    const restarted = {
      plain: { ...after.plain, startSeconds: running.plain.startSeconds },
      dialogs: { ...after.dialogs, startSeconds: running.dialogs.startSeconds },
    };
    for (const which of ["plain", "dialogs"] as const) {
      await running[which]?.stop();
      running[which] = undefined;
    }
    const starts = { plain: [] as number[], dialogs: [] as number[] };
    for (let k = 0; k < options.startRounds; k++) {
      for (const which of k % 2 === 0 ? (["plain", "dialogs"] as const) : (["dialogs", "plain"] as const)) {
        const daemon = await Daemon.start(dirs[which], url, bots[which]);
        starts[which].push(daemon.startSeconds);
        await daemon.stop();
      }
    }
    const stats = (v: number[]) => ({ p50: round(median(v)), max: round(Math.max(...v)) });
    return {
      openSeconds: { plain: round(plainOpen.seconds), dialogs: round(dialogsOpen.seconds) },
      running: memory,
      resumeMs: { one: stats(one), many: stats(many), samples: options.resumeSamples },
      restarted,
      starts: { ...starts, ratio: round(median(starts.dialogs) / median(starts.plain)) },
    };
  } finally {
    await running.plain?.stop();
    await running.dialogs?.stop();
    await rm(dirs.plain, { recursive: true, force: true });
    await rm(dirs.dialogs, { recursive: true, force: true });
  }
}

async function latencyRow(
  host: Child,
  url: string,
  options: { waiting: number; rate: number; rounds: number; pings: number; warmup: number },
): Promise<NonNullable<DialogsResult["latency"]>> {
  const bot = await host.call<Bot>("bot", {
    channel: "latency",
    email: "latency@sandbox.example",
    name: "Latency Bot",
    ...LIMITS,
  });
  const rounds = { none: [] as number[][], waiting: [] as number[][] };
  for (let r = 0; r < options.rounds; r++) {
    const seed = Math.floor(Math.random() * 2 ** 32);
    for (const who of r % 2 === 0 ? (["none", "waiting"] as const) : (["waiting", "none"] as const)) {
      const dir = await mkdtemp(join(tmpdir(), "bothost-dlg-"));
      const daemon = await Daemon.start(dir, url, bot);
      try {
        const content = who === "none" ? "hi" : "ask";
        await host.call("open", {
          channel: bot.channel,
          prefix: `r${r}-${who}-`,
          count: options.waiting,
          content,
          rate: options.rate,
        });
        await sleep(3000);
        const delays = await host.call<number[]>("pings", {
          channel: bot.channel,
          mention: bot.name,
          count: options.pings,
          everyMs: 500,
          seed,
        });
        if (delays.length < options.pings)
          throw new Error(`${options.pings - delays.length} pings unanswered (${who})`);
        rounds[who].push(delays.slice(options.warmup));
      } finally {
        await daemon.stop();
        await rm(dir, { recursive: true, force: true });
      }
    }
  }
  const stats = (runs: number[][]) => ({
    p50: round(percentile(runs.flat(), 50)),
    p99: round(percentile(runs.flat(), 99)),
  });
  const none = stats(rounds.none);
  const waitingDialogs = stats(rounds.waiting);
  return {
    waiting: options.waiting,
    rounds: options.rounds,
    pings: rounds.none.flat().length,
    none,
    waitingDialogs,
    p99DiffMs: round(waitingDialogs.p99 - none.p99),
    p99DiffInterval: p99DiffInterval(rounds.none, rounds.waiting),
  };
}

export async function runDialogs(
  options: {
    dialogs: number;
    waiting: number;
    rate: number;
    settleSeconds: number;
    rounds: number;
    pings: number;
    /** Starts of each daemon alone on its state, alternating which first. */
    startRounds: number;
  },
  say: (line: string) => void,
): Promise<DialogsResult> {
  const host = await forkChild("servers/dialog-host.ts");
  const url = host.ready.url as string;
  try {
    say(`waiting dialogs: ${options.dialogs} (b) against none (a), whole daemons …`);
    const memory = await memoryRows(host, url, { ...options, resumeSamples: 20 }, say);
    const { running, restarted, resumeMs } = memory;
    for (const [label, m] of [
      ["running", running],
      ["restarted", restarted],
    ] as const)
      say(
        `  ${label}: RSS ${m.plain.rssMb} / ${m.dialogs.rssMb} MB (b − a ${round(m.dialogs.rssMb - m.plain.rssMb)}), ` +
          `after GC RSS ${m.plain.rssAfterGcMb} / ${m.dialogs.rssAfterGcMb} MB (b − a ${round(m.dialogs.rssAfterGcMb - m.plain.rssAfterGcMb)}), ` +
          `heap ${m.plain.heapAfterGcMb} / ${m.dialogs.heapAfterGcMb} MB (b − a ${round(m.dialogs.heapAfterGcMb - m.plain.heapAfterGcMb)})`,
      );
    say(`  restarted: start ${restarted.plain.startSeconds} / ${restarted.dialogs.startSeconds} s`);
    const { starts } = memory;
    say(
      `  started alone, ${starts.plain.length} each, alternating: median ${round(median(starts.plain))} / ${round(median(starts.dialogs))} s (${starts.ratio}×); ` +
        `a ${starts.plain.join(", ")} s, b ${starts.dialogs.join(", ")} s`,
    );
    say(
      `  resume (answer to next question), ${resumeMs.samples} each: 1 waiting p50 ${resumeMs.one.p50} ms (max ${resumeMs.one.max}), ` +
        `${options.dialogs} waiting p50 ${resumeMs.many.p50} ms (max ${resumeMs.many.max})`,
    );
    if (options.rounds === 0)
      return { dialogs: options.dialogs, settleSeconds: options.settleSeconds, ...memory };
    say(`command latency: ${options.waiting} waiting dialogs against none, ${options.rounds} rounds …`);
    const latency = await latencyRow(host, url, { ...options, warmup: 3 });
    say(
      `  answer delay p50 ${latency.none.p50} / ${latency.waitingDialogs.p50} ms, p99 ${latency.none.p99} / ${latency.waitingDialogs.p99} ms ` +
        `(b − a ${latency.p99DiffMs} ms, 95% interval ${latency.p99DiffInterval.join(" to ")} ms)`,
    );
    return { dialogs: options.dialogs, settleSeconds: options.settleSeconds, ...memory, latency };
  } finally {
    await host.stop();
  }
}
