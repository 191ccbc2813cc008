/** The printed summary: one row per measurement, with the machine it ran on. */
import type { BusyOrgRow, LightRow } from "./suites/busy-org.ts";
import type { DispatchResult } from "./suites/dispatch.ts";
import type { E2eRow } from "./suites/e2e.ts";
import type { IdleResult } from "./suites/idle.ts";
import type { LatencyRow } from "./suites/latency.ts";
import type { ManyBotsResult } from "./suites/many-bots.ts";
import type { ModerationResult } from "./suites/moderation.ts";
import type { QueueRow } from "./suites/queue.ts";
import type { RedisListResult } from "./suites/redis-list.ts";
import type { ReplicaWaitResult } from "./suites/replica-wait.ts";
import type { ScaleResult } from "./suites/scale.ts";
import type { SchedulerResult } from "./suites/scheduler.ts";

type Results = {
  machine?: { cpu: string; cores: number; memoryGb: number; node: string };
  dispatch?: DispatchResult;
  e2e?: E2eRow[];
  queue?: QueueRow[];
  many?: ManyBotsResult;
  latency?: LatencyRow[];
  scale?: ScaleResult;
  idle?: IdleResult;
  scheduler?: SchedulerResult;
  moderation?: ModerationResult;
  redis?: RedisListResult;
  replica?: ReplicaWaitResult;
  busy?: { light: LightRow; rows: BusyOrgRow[] };
} & Record<string, unknown>;

const n = (v: number) => v.toLocaleString("en-US");

export function formatTable(input: Record<string, unknown>): string {
  const r = input as Results;
  const rows: [string, string][] = [];
  if (r.machine) {
    const m = r.machine;
    rows.push(["machine", `${m.cpu} × ${m.cores} cores, ${m.memoryGb} GB, Node ${m.node}`]);
  }
  if (r.busy) {
    const l = r.busy.light;
    rows.push([
      "light traffic reaction, (a) bare loop / (b) bothost run",
      `answer delay p50 ${l.bare.p50} / ${l.bothost.p50} ms, p99 ${l.bare.p99} / ${l.bothost.p99} ms, b − a at p99 ${l.p99DiffMs} ms (95% interval ${l.p99DiffInterval.join(" to ")} ms over the rounds; ${l.pings} pings each, ${l.rounds} rounds alternating, ${l.arrivals === "grid" ? "on a 500 ms grid" : "at random times"})`,
    ]);
  }
  for (const b of r.busy?.rows ?? []) {
    const a = b.answerMs;
    rows.push([
      `busy organization, ${b.rate} messages/s, ${b.simulatedSeconds / 60} simulated min (${b.speed}× clock)`,
      `429s ${b.responses429}; event-queue calls ${n(b.calls.events)} (busiest minute ${b.busiestMinute.events}, hour ${n(b.busiestHour.events)}), other ${n(b.calls.other)} (${b.busiestMinute.other}, ${n(b.busiestHour.other)}); pings answered ${b.answered}/${b.pings}; delay p50 ${a.p50} ms, p99 ${a.p99} ms (first quarter ${a.p99FirstQuarter}, last ${a.p99LastQuarter}), max ${a.max} ms`,
    ]);
  }
  for (const q of r.queue ?? []) {
    const { bare: a, paced: p, bothost: b } = q.contenders as Record<string, QueueRow["contenders"][string]>;
    if (!a || !p || !b) continue;
    rows.push([
      `queue server, ${q.load.name}: (a) bare / (p) bare paced / (b) bothost run`,
      `CPU ${a.cpuUsPerEvent} / ${p.cpuUsPerEvent} / ${b.cpuUsPerEvent} µs/event, b/a ${q.cpuVsBare.median} (${q.cpuVsBare.min}–${q.cpuVsBare.max}), b/p ${q.cpuVsPaced.median}; lag p50 ${a.lagP50Ms} / ${p.lagP50Ms} / ${b.lagP50Ms} ms, p99 ${a.lagP99Ms} / ${p.lagP99Ms} / ${b.lagP99Ms} ms (b − p ${q.lagP99VsPacedMs}); all handled ${n(a.allHandledMs)} / ${n(p.allHandledMs)} / ${n(b.allHandledMs)} ms, b/a ${q.timeVsBare.median}; polls ${n(a.polls)} / ${p.polls} / ${b.polls} (busiest minute ${n(a.busiestMinutePolls)} / ${p.busiestMinutePolls} / ${b.busiestMinutePolls}), 429s ${p.refused} / ${b.refused}; first to last handled ${a.dispatchMs} / ${p.dispatchMs} / ${b.dispatchMs} ms, CPU ${a.dispatchCpuUsPerEvent} / ${p.dispatchCpuUsPerEvent} / ${b.dispatchCpuUsPerEvent} µs/event (b/a ${q.dispatchVsBare.time.median}, ${q.dispatchVsBare.cpu.median}); ${q.rounds} rounds`,
    ]);
    const base = q.contenders.baseline;
    const bv = q.baselineVsBare;
    if (base && bv)
      rows.push([
        `queue server, ${q.load.name}: (d) baseline build (BENCH_CLI_BASELINE)`,
        `CPU ${base.cpuUsPerEvent} µs/event, d/a ${bv.cpu.median} (${bv.cpu.min}–${bv.cpu.max}); all handled ${n(base.allHandledMs)} ms, d/a ${bv.time.median} (${bv.time.min}–${bv.time.max}); first to last handled ${base.dispatchMs} ms, CPU ${base.dispatchCpuUsPerEvent} µs/event (d/a ${bv.dispatchCpu.median})`,
      ]);
  }
  if (r.many) {
    const m = r.many;
    rows.push([
      `many bots: ${m.bots} in one bothost run (${m.allPublic} all_public_streams), ${m.rate} messages/s, ${m.simulatedSeconds / 60} simulated min (${m.speed}× clock)`,
      `CPU ${m.cpuOfOneCore} of one core, RSS ${m.rssMb.end} MB (peak ${m.rssMb.peak}); lag p99 per bot median ${n(m.lagP99Ms.median)} ms, worst ${n(m.lagP99Ms.worst)} ms (all-public worst ${n(m.lagP99Ms.allPublicWorst)}); seen ${n(m.seen)}/${n(m.expected)}; 429s ${m.responses429}; busiest minute of a bot ${m.busiestMinute.events} event-queue, ${m.busiestMinute.other} other calls`,
    ]);
  }
  for (const e of r.e2e ?? []) {
    rows.push([
      `end to end, fixed batch ${e.batch} (a) bare / (b) bothost run`,
      `${n(e.bareEventsPerSec)} / ${n(e.bothostEventsPerSec)} events/s, b/a ${e.ratio} (rounds ${e.ratioMin}–${e.ratioMax}, ${e.rounds} rounds, ${n(e.events)} events each); CPU ${n(e.bareCpuMs)} / ${n(e.cpuMs)} ms, b/a ${e.cpuRatio}`,
    ]);
    for (const o of e.others ?? []) {
      rows.push([
        `end to end, batch ${e.batch}, ${o.name}`,
        `${n(o.eventsPerSec)} events/s, over (a) ${o.ratio} (rounds ${o.ratioMin}–${o.ratioMax}); CPU ${n(o.cpuMs)} ms, (a) over it ${o.cpuRatio}`,
      ]);
    }
  }
  if (r.dispatch) {
    const d = r.dispatch;
    const cpu = (k: keyof DispatchResult["runs"]) =>
      d.runs[k].map((x) => x.cpuMicrosPerEvent).sort((a, b) => a - b)[Math.floor(d.runs[k].length / 2)];
    rows.push([
      "dispatch (a) bare undici loop",
      `${n(d.median.bare)} events/s (${cpu("bare")} µs CPU/event)`,
    ]);
    rows.push([
      "dispatch (b) bothost runtime",
      `${n(d.median.bothost)} events/s (${cpu("bothost")} µs CPU/event)`,
    ]);
    rows.push(["dispatch (c) zulip-js callOnEachEvent", `${n(d.median.zulipJs)} events/s`]);
    rows.push([
      "dispatch b/a, b/c",
      `${d.ratios.bothostOverBare}, ${d.ratios.bothostOverZulipJs} (medians of ${d.options.rounds} rounds; b/a per round ${d.ratios.bothostOverBarePerRound.join(", ")})`,
    ]);
  }
  for (const row of r.latency ?? []) {
    rows.push([
      `reaction latency at ${n(row.targetRate)}/s`,
      `p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms, max ${row.maxMs} ms (achieved ${n(row.achievedRate)}/s, ${n(row.replies)}/${n(row.sent)} replies)`,
    ]);
  }
  if (r.scale) {
    const s = r.scale;
    rows.push([
      `${n(s.bots)} bots: all queues registered`,
      `${s.startSeconds} s from spawn (${s.registrationSeconds} s registering, ${s.registrationConcurrency} at a time)`,
    ]);
    rows.push([
      `${n(s.bots)} bots: resident memory`,
      `${s.rssAfterStartMb} MB after start, ${s.rssAfterIdleMb} MB after idle`,
    ]);
    rows.push([
      `${n(s.bots)} bots: idle CPU`,
      `${s.idleCpuPercent}% of one core over ${s.idleSeconds} s (${s.heartbeatsDuringIdle} heartbeat polls)`,
    ]);
  }
  if (r.idle) {
    const i = r.idle;
    rows.push([
      `${n(i.bots)} idle bots: RSS (a) bare loop / (b) bothost run`,
      `${i.bare.rssMb} / ${i.bothost.rssMb} MB, b/a ${i.rssRatio} (window from ${i.settleSeconds} s after start${i.settledBy === "reduced" ? ", past both processes' post-start collections" : ""})`,
    ]);
    rows.push([
      `${n(i.bots)} idle bots: CPU (a) bare loop / (b) bothost run`,
      `${i.bare.cpuPercent}% / ${i.bothost.cpuPercent}% of one core, b/a ${i.cpuRatio} over ${i.idleSeconds} s (heartbeats every ${i.heartbeatSeconds} s)`,
    ]);
  }
  if (r.scheduler) {
    const s = r.scheduler;
    rows.push([
      `scheduler: ${n(s.jobs)} cron jobs`,
      `+${s.heapMb} MB heap (+${s.rssMb} MB RSS), added and started in ${s.addAndStartMs} ms`,
    ]);
    rows.push([
      "scheduler: lateness",
      `p50 ${s.latenessMs.p50} ms, p99 ${s.latenessMs.p99} ms, max ${s.latenessMs.max} ms over ${n(s.fires)} fires`,
    ]);
    rows.push(["scheduler: CPU", `${s.cpuPercent}% of one core over ${s.seconds} s (no-op handlers)`]);
  }
  if (r.moderation) {
    const m = r.moderation;
    rows.push([
      "moderation rules",
      m.messagesPerSecond !== undefined ? `${n(m.messagesPerSecond)} messages/s on one core` : m.note,
    ]);
  }
  if (r.redis) {
    if (!r.redis.available) rows.push(["redis listing", r.redis.note]);
    const [a, b] = r.redis.rows;
    if (a && b) {
      const ratio = (x: number, y: number) => (y > 0 ? (x / y).toFixed(2) : "-");
      rows.push([
        `redis listing: (a) 0 / (b) ${n(b.unrelated)} unrelated keys`,
        `dead letters ${a.lettersMs} / ${b.lettersMs} ms (b/a ${ratio(b.lettersMs, a.lettersMs)}), a start's runtime list ${a.runtimeMs} / ${b.runtimeMs} ms (b/a ${ratio(b.runtimeMs, a.runtimeMs)}); a SCAN MATCH walk ${a.scanMs} / ${b.scanMs} ms`,
      ]);
    }
  }
  if (r.replica) {
    if (!r.replica.available) rows.push(["replica wait", r.replica.note]);
    for (const row of r.replica.rows) {
      rows.push([
        `replica wait at ${n(r.replica.rate)} events/s: ${row.mode}`,
        `${row.cpuUsPerEvent} µs CPU/event (client), lag p50 ${row.lagP50Ms} ms, p99 ${row.lagP99Ms} ms (${n(row.events)} events)`,
      ]);
    }
  }
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `| ${k.padEnd(width)} | ${v} |`).join("\n");
}
