/**
 * Reaction latency: from a user's message being accepted by the server to the bot's reply
 * arriving at the server, at a steady rate. The sandbox runs in a child process; the bot is a
 * BotRuntime in this process replying `ack <id>` to each direct message. The client's rate
 * limiter is off: the server allows one account 200 calls a minute, so these rates measure the
 * runtime, not a setup a real server would accept from one bot.
 */
import { forkChild } from "../lib/child.ts";
import { startBenchRuntime } from "../lib/runtime.ts";
import { percentile, round } from "../lib/stats.ts";

export interface LatencyRow {
  targetRate: number;
  achievedRate: number;
  sent: number;
  replies: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** CPU use (1 = one core) of the sandbox process and of the bot's process during the run. */
  serverCpu: number;
  botCpu: number;
}

export async function runLatency(
  options: { rates: number[]; seconds: number },
  say: (line: string) => void,
): Promise<LatencyRow[]> {
  const host = await forkChild("servers/sandbox-host.ts");
  const url = host.ready.url as string;
  const rows: LatencyRow[] = [];
  try {
    for (const [i, rate] of options.rates.entries()) {
      const account = await host.call<{ email: string; apiKey: string }>("bot", {
        email: `latency-${i}@sandbox.example`,
        name: `Latency ${i}`,
      });
      const bench = await startBenchRuntime({
        url,
        email: account.email,
        apiKey: account.apiKey,
        rateLimit: false,
        setup: (bot) => {
          bot.on("message", { direct: true }, (ctx) => ctx.reply(`ack ${ctx.event.message.id}`));
        },
      });
      await bench.runtime.start();
      // Warm-up at the same rate (JIT, connections), not recorded.
      await host.call("load", {
        to: account.email,
        rate,
        seconds: Math.min(3, options.seconds),
        settleMs: 30_000,
      });
      const cpu = process.cpuUsage();
      const started = performance.now();
      const result = await host.call<{
        sent: number;
        achievedRate: number;
        replies: number;
        latencies: number[];
        serverCpu: number;
      }>("load", { to: account.email, rate, seconds: options.seconds, settleMs: 30_000 });
      const used = process.cpuUsage(cpu);
      const botCpu = (used.user + used.system) / 1000 / (performance.now() - started);
      await bench.close();
      const row: LatencyRow = {
        targetRate: rate,
        achievedRate: Math.round(result.achievedRate),
        sent: result.sent,
        replies: result.replies,
        p50Ms: round(percentile(result.latencies, 50), 3),
        p99Ms: round(percentile(result.latencies, 99), 3),
        maxMs: round(percentile(result.latencies, 100), 3),
        serverCpu: round(result.serverCpu, 2),
        botCpu: round(botCpu, 2),
      };
      if (bench.problems.length > 0) say(`  latency ${rate}/s: bot logged ${bench.problems.length} problems`);
      say(
        `  latency ${rate}/s: sent ${row.sent} at ${row.achievedRate}/s, ${row.replies} replies, p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms (CPU: sandbox ${row.serverCpu}, bot ${row.botCpu} cores)`,
      );
      rows.push(row);
    }
    return rows;
  } finally {
    await host.stop();
  }
}
