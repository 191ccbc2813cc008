/**
 * What one helper call in a handler costs, against a handler that only replies: `bothost run`
 * (dist/) with bench/e2e/helper-calls-bot.mjs, its state in a redis-server of the suite's own,
 * the sandbox in the bench process. Each message names the call its handler makes; the bench sends
 * the next once the reply showed and 300 ms passed for the writes after it. Counted per message,
 * between marker calls: every Redis call of the daemon (MONITOR; the delivery ledger, effect
 * claims and results, lease renewals), and every API request but the event queue's polls (the
 * account's rate budget); and the time from the message's send to the reply's.
 */
import { startRedisBot } from "../lib/redis-bot.ts";
import { until } from "../lib/redis-monitor.ts";
import { median, sleep } from "../lib/stats.ts";

export interface HelperCallsRow {
  call: string;
  /** Per message, medians: the daemon's Redis calls, its API requests (polls aside), send to reply. */
  storeCalls: number;
  /** Of them, the calls on effect records (each recorded call's claim and result). */
  effectCalls: number;
  apiCalls: number;
  ms: number;
}

export interface HelperCallsResult {
  available: boolean;
  note: string;
  messages: number;
  rows: HelperCallsRow[];
}

export async function runHelperCalls(
  options: { messages: number },
  say: (line: string) => void,
): Promise<HelperCallsResult> {
  const bot = await startRedisBot({ name: "helpers", module: "bench/e2e/helper-calls-bot.mjs" });
  if (!bot) {
    const note = "redis-server is not on PATH; not measured";
    say(`  helper calls: ${note}`);
    return { available: false, note, messages: 0, rows: [] };
  }
  const { redis, sandbox } = bot;
  try {
    const requests = sandbox.control.requests;
    const email = "helpers-bot@sandbox.example";

    /** Sends `content`; resolves its reply's text and what it cost. */
    const measure = async (content: string) => {
      await sleep(300);
      const from = await redis.mark(`before ${content}`);
      const asked = requests.length;
      const before = bot.said().length;
      const sent = performance.now();
      bot.dm(content);
      await until(() => bot.said().length > before, "the bot's reply");
      const ms = performance.now() - sent;
      await sleep(300);
      const calls = redis.between(from, await redis.mark(`after ${content}`));
      const store = calls.length;
      const effects = calls.filter((c) => c.args.some((a) => a.includes("/effects/"))).length;
      const api = requests.slice(asked).filter((r) => r.email === email && r.path !== "/events").length;
      return { text: String(bot.said().at(-1)!.content), store, effects, api, ms };
    };

    // One message of each kind first, unmeasured: the first snippet list, the first booking's
    // recipient look-up and the first reply's caches are not what a message costs after them.
    await measure("ensure warm");
    await measure("reply");
    // "cancel" cancels the bookings "book" made, one each.
    const booked: string[] = [];
    const kinds: { call: string; content: (i: number) => string }[] = [
      { call: "reply (baseline)", content: () => "reply" },
      { call: "snippets.ensure, unchanged", content: () => "ensure same" },
      { call: "snippets.ensure, changed", content: (i) => `ensure text-${i}` },
      { call: "schedule.at", content: () => "book" },
      { call: "schedule.cancel", content: () => `cancel ${booked.shift()}` },
    ];
    const rows: HelperCallsRow[] = [];
    for (const kind of kinds) {
      const samples = [];
      for (let i = 0; i < options.messages; i++) {
        const sample = await measure(kind.content(i));
        if (sample.text.startsWith("booked ")) booked.push(sample.text.slice("booked ".length));
        samples.push(sample);
      }
      const row: HelperCallsRow = {
        call: kind.call,
        storeCalls: median(samples.map((s) => s.store)),
        effectCalls: median(samples.map((s) => s.effects)),
        apiCalls: median(samples.map((s) => s.api)),
        ms: Math.round(median(samples.map((s) => s.ms))),
      };
      say(
        `  helper calls, ${row.call}: ${row.storeCalls} Redis calls (${row.effectCalls} on effect records), ${row.apiCalls} API requests, ${row.ms} ms to the reply (medians of ${options.messages})`,
      );
      rows.push(row);
    }
    return { available: true, note: "", messages: options.messages, rows };
  } finally {
    await bot.stop();
  }
}
