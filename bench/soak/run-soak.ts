/**
 * The soak: `bothost run` as a subprocess runs the shipped bots (echo bots, and the
 * announcements bot) against a sandbox in this process, at a steady load, while the sandbox
 * injects faults on a schedule and the daemon is killed with SIGKILL and restarted. At the end:
 * every message answered exactly once, every announcement out once, memory flat.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import {
  type DaemonBotConfig,
  type DaemonProcess,
  repoRoot,
  spawnDaemon,
  writeDaemonConfig,
} from "../lib/daemon-process.ts";
import { rssBytes } from "../lib/proc.ts";
import { sleep } from "../lib/stats.ts";
import { type FaultName, rotation } from "./faults.ts";
import { checkAnnouncements, checkReplies, memoryTrend, type SoakReport } from "./soak-report.ts";

export interface SoakOptions {
  minutes: number;
  /** Echo bots (each its own account); the load is spread over them. */
  echoBots?: number;
  /** Messages per second per echo bot (the client keeps each bot under 200 calls a minute). */
  ratePerBot?: number;
  /** Include the announcements bot (an announcement every minute). */
  announcements?: boolean;
  say?: (line: string) => void;
}

const OWNER = "owner@sandbox.example";
const SENDERS = ["member@sandbox.example", "owner@sandbox.example"];

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const say = options.say ?? (() => {});
  const durationMs = options.minutes * 60_000;
  const echoCount = options.echoBots ?? 3;
  const rate = Math.round((options.ratePerBot ?? 0.8) * echoCount * 100) / 100;
  const dir = await mkdtemp(join(tmpdir(), "bothost-soak-"));
  // Heartbeats every 2 s and a 4 s long-poll timeout: a hung poll is noticed after 4 s + 2 s margin.
  const sandbox = await startSandbox({ heartbeatSeconds: 2, longpollTimeoutSeconds: 4 });
  let daemon: DaemonProcess | undefined;
  try {
    const bots: DaemonBotConfig[] = [];
    const echoIds = new Map<number, string>();
    for (let i = 0; i < echoCount; i++) {
      const email = `echo-${i}@sandbox.example`;
      const user = sandbox.control.createUser({
        email,
        full_name: `Echo ${i}`,
        bot: "generic",
        owner: OWNER,
      });
      echoIds.set(user.user_id, email);
      bots.push({
        name: `echo-${i}`,
        module: join(repoRoot, "bots/echo.ts"),
        email,
        apiKey: user.api_key,
        settings: { prefix: "re: " },
      });
    }
    let announcerId: number | undefined;
    if (options.announcements !== false) {
      const email = "announce@sandbox.example";
      const user = sandbox.control.createUser({
        email,
        full_name: "Announcer",
        bot: "generic",
        owner: OWNER,
        channels: ["general"],
      });
      announcerId = user.user_id;
      bots.push({
        name: "announcements",
        module: join(repoRoot, "bots/announcements.ts"),
        email,
        apiKey: user.api_key,
        settings: {
          announcements: [
            {
              id: "soak",
              cron: "* * * * *",
              channel: "general",
              topic: "soak",
              content: "soak announcement",
            },
          ],
        },
      });
    }
    const config = join(dir, "bothost.yaml");
    await writeDaemonConfig(config, {
      url: sandbox.url,
      state: { path: join(dir, "state") },
      bots,
      extra: "longpoll_margin: 2s\nshutdown_timeout: 5s",
    });

    const incarnations: DaemonProcess[] = [];
    const start = async () => {
      daemon = spawnDaemon(config);
      incarnations.push(daemon);
      await daemon.waitForLine((l) => l.msg === "daemon started", 120_000);
    };
    await start();
    const began = performance.now();
    const elapsed = () => performance.now() - began;

    // Load: direct messages to the echo bots, round robin, at a steady rate.
    const sent = new Map<number, string>(); // message id → expected reply content
    const botOf = new Map<number, number>(); // message id → echo bot user id
    const echoUserIds = [...echoIds.keys()];
    let seq = 0;
    let paused = false;
    let loadStart = performance.now();
    let loadSent = 0;
    const loadTimer = setInterval(() => {
      if (paused) return;
      const due = Math.floor(((performance.now() - loadStart) / 1000) * rate);
      while (loadSent < due) {
        const botId = echoUserIds[seq % echoUserIds.length] as number;
        const content = `s${seq}`;
        const { id } = sandbox.control.sendAs(SENDERS[seq % SENDERS.length] as string, {
          type: "direct",
          to: [botId],
          content,
        });
        sent.set(id, `re: ${content}`);
        botOf.set(id, botId);
        seq++;
        loadSent++;
      }
    }, 50);
    const pause = () => {
      paused = true;
    };
    const resume = () => {
      paused = false;
      loadStart = performance.now();
      loadSent = 0;
    };
    const answered = () => countAnswered(sandbox, sent, echoIds);
    const drain = async (timeoutMs: number) => {
      const deadline = performance.now() + timeoutMs;
      while (answered() < sent.size && performance.now() < deadline) await sleep(200);
      return answered() >= sent.size;
    };

    // Memory: VmRSS of whichever daemon is running, once a second.
    const samples: { incarnation: number; atMs: number; rss: number }[] = [];
    const memTimer = setInterval(() => {
      const d = daemon;
      const rss = d ? rssBytes(d.pid) : undefined;
      if (d && rss !== undefined)
        samples.push({ incarnation: incarnations.indexOf(d), atMs: elapsed(), rss });
    }, 1000);

    const faults: { name: FaultName; atSeconds: number }[] = [];
    const note = (name: FaultName) => {
      faults.push({ name, atSeconds: Math.round(elapsed() / 1000) });
      say(`  ${Math.round(elapsed() / 1000)} s: ${name}`);
    };
    // Kill -9 early (at 12% of the run), then a fault every `interval` until 90%.
    const interval = Math.max(4_000, durationMs / 40);
    let nextFault = durationMs * 0.2;
    let round = 0;
    let killed = false;
    while (elapsed() < durationMs) {
      await sleep(250);
      if (!killed && elapsed() >= durationMs * 0.12) {
        killed = true;
        pause();
        if (!(await drain(60_000))) say("  (drain before kill -9 timed out)");
        await sleep(1000); // let the last marks reach the disk
        note("kill-9");
        daemon?.child.kill("SIGKILL");
        await daemon?.exited;
        daemon = undefined;
        resume(); // messages sent while the daemon is down are fetched at the restart
        await sleep(3000);
        await start();
      } else if (elapsed() >= nextFault && elapsed() < durationMs * 0.9) {
        const fault = rotation[round % rotation.length]!;
        if (fault.quiet) {
          pause();
          await drain(60_000);
          note(fault.name);
          fault.inject(sandbox, [...echoIds.values()], round);
          await sleep(5000); // heartbeats every 2 s: the resets hit polls
          resume();
        } else {
          note(fault.name);
          fault.inject(sandbox, [...echoIds.values()], round);
        }
        round++;
        nextFault += interval;
      }
    }
    clearInterval(loadTimer);
    const drained = await drain(120_000);
    clearInterval(memTimer);
    daemon?.child.kill("SIGTERM");
    const exitCode = await daemon?.exited;
    daemon = undefined;
    const logs = incarnations.flatMap((d) => d.lines);
    return {
      minutes: options.minutes,
      echoBots: echoCount,
      ratePerSecond: rate,
      drained,
      exitCode: exitCode ?? "none",
      replies: checkReplies(sandbox, sent, botOf, echoIds),
      announcements: announcerId === undefined ? undefined : checkAnnouncements(sandbox, announcerId),
      faults,
      restarts: incarnations.length - 1,
      serverSaw: {
        resets: sandbox.control.requests.filter((r) => r.status === -1).length,
        hungPolls: sandbox.control.requests.filter((r) => r.status === 0).length,
        status5xx: sandbox.control.requests.filter((r) => r.status >= 500).length,
        status429: sandbox.control.requests.filter((r) => r.status === 429).length,
        requests: sandbox.control.requests.length,
      },
      registrations: countBy(
        logs.filter((l) => l.msg === "event queue registered"),
        (l) => String(l.reason),
      ),
      handlerFailures: logs.filter((l) => l.msg === "handler failed").length,
      errorLines: logs.filter((l) => typeof l.level === "number" && l.level >= 50).length,
      memory: memoryTrend(samples, incarnations.length - 1),
    };
  } finally {
    daemon?.child.kill("SIGKILL");
    await sandbox.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

function countAnswered(sandbox: Sandbox, sent: Map<number, string>, echoIds: Map<number, string>): number {
  const expected = new Set(sent.values());
  const seen = new Set<string>();
  for (const m of sandbox.control.messages()) {
    if (echoIds.has(m.sender_id as number) && expected.has(String(m.content))) seen.add(String(m.content));
  }
  return seen.size;
}

function countBy<T>(items: T[], key: (item: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) out[key(item)] = (out[key(item)] ?? 0) + 1;
  return out;
}
