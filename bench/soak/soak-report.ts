/** What the soak checks at the end, and how it prints it. */
import type { Sandbox } from "../../src/sandbox/types.ts";
import { median, round } from "../lib/stats.ts";

export interface ReplyCheck {
  sent: number;
  /** Messages answered exactly once. */
  exactlyOnce: number;
  /** Message ids with no reply. */
  lost: number[];
  /** Message ids answered more than once, with the count. */
  duplicated: { id: number; replies: number }[];
  /** Replies in the wrong conversation or by the wrong bot. */
  misrouted: number;
}

export interface AnnouncementCheck {
  /** Announcements that went out, one per minute slot expected. */
  sent: number;
  /** Minute slots with more than one announcement. */
  duplicatedMinutes: number[];
  /** Minute slots between the first and the last announcement with none. */
  missingMinutes: number[];
}

export interface MemoryTrend {
  /** Samples of the longest-running (last) daemon process. */
  samples: number;
  firstQuarterMb: number;
  lastQuarterMb: number;
  growthPercent: number;
  peakMb: number;
  /** Median RSS of each minute of the last process (MB), to see whether growth levels off. */
  perMinuteMb: number[];
}

export interface SoakReport {
  minutes: number;
  echoBots: number;
  ratePerSecond: number;
  drained: boolean;
  exitCode: number | string;
  replies: ReplyCheck;
  announcements: AnnouncementCheck | undefined;
  faults: { name: string; atSeconds: number }[];
  restarts: number;
  /** What the sandbox's request log shows of the injected faults. */
  serverSaw: { resets: number; hungPolls: number; status5xx: number; status429: number; requests: number };
  registrations: Record<string, number>;
  handlerFailures: number;
  errorLines: number;
  memory: MemoryTrend;
}

/** Count the echo bots' replies per sent message (reply content is "re: " + the message). */
export function checkReplies(
  sandbox: Sandbox,
  sent: Map<number, string>,
  botOf: Map<number, number>,
  echoIds: Map<number, string>,
): ReplyCheck {
  const byContent = new Map<string, Record<string, unknown>[]>();
  for (const m of sandbox.control.messages()) {
    if (!echoIds.has(m.sender_id as number)) continue;
    const list = byContent.get(String(m.content)) ?? [];
    list.push(m);
    byContent.set(String(m.content), list);
  }
  const check: ReplyCheck = { sent: sent.size, exactlyOnce: 0, lost: [], duplicated: [], misrouted: 0 };
  for (const [id, expected] of sent) {
    const replies = byContent.get(expected) ?? [];
    if (replies.length === 0) check.lost.push(id);
    else if (replies.length > 1) check.duplicated.push({ id, replies: replies.length });
    else check.exactlyOnce++;
    for (const r of replies) {
      const dm = (r.dm_user_ids as number[] | undefined) ?? [];
      if (r.sender_id !== botOf.get(id) || !dm.includes(botOf.get(id) as number)) check.misrouted++;
    }
  }
  return check;
}

export function checkAnnouncements(sandbox: Sandbox, announcerId: number): AnnouncementCheck {
  const minutes = sandbox.control
    .messages()
    .filter((m) => m.sender_id === announcerId)
    .map((m) => Math.floor((m.timestamp as number) / 60));
  const counts = new Map<number, number>();
  for (const minute of minutes) counts.set(minute, (counts.get(minute) ?? 0) + 1);
  const sorted = [...counts.keys()].sort((a, b) => a - b);
  const missing: number[] = [];
  for (let m = sorted[0] ?? 0; sorted.length > 0 && m <= (sorted.at(-1) as number); m++) {
    if (!counts.has(m)) missing.push(m);
  }
  return {
    sent: minutes.length,
    duplicatedMinutes: [...counts].filter(([, n]) => n > 1).map(([m]) => m),
    missingMinutes: missing,
  };
}

/** Compare the first and last quarter of the last process's samples (its first 10 s skipped). */
export function memoryTrend(
  samples: { incarnation: number; atMs: number; rss: number }[],
  last: number,
): MemoryTrend {
  const own = samples.filter((s) => s.incarnation === last);
  const warm = own.filter((s) => s.atMs - (own[0]?.atMs ?? 0) >= 10_000);
  const use = warm.length >= 8 ? warm : own;
  const quarter = Math.max(1, Math.floor(use.length / 4));
  const first = median(use.slice(0, quarter).map((s) => s.rss)) / 2 ** 20;
  const lastQ = median(use.slice(-quarter).map((s) => s.rss)) / 2 ** 20;
  return {
    samples: use.length,
    firstQuarterMb: round(first),
    lastQuarterMb: round(lastQ),
    growthPercent: round((100 * (lastQ - first)) / first, 2),
    peakMb: round(Math.max(...use.map((s) => s.rss)) / 2 ** 20),
    perMinuteMb: perMinute(own),
  };
}

function perMinute(samples: { atMs: number; rss: number }[]): number[] {
  const start = samples[0]?.atMs ?? 0;
  const minutes: number[][] = [];
  for (const s of samples) {
    const minute = Math.floor((s.atMs - start) / 60_000);
    const list = minutes[minute] ?? [];
    list.push(s.rss);
    minutes[minute] = list;
  }
  return minutes.map((m) => round(median(m) / 2 ** 20));
}

export function formatSoakReport(r: SoakReport): string {
  const rep = r.replies;
  const lines = [
    `soak: ${r.minutes} min, ${r.echoBots} echo bots at ${r.ratePerSecond} messages/s in total, ${r.restarts} kill -9 restart(s)`,
    `messages: ${rep.sent} sent, ${rep.exactlyOnce} answered exactly once, ${rep.lost.length} lost, ${rep.duplicated.length} duplicated, ${rep.misrouted} misrouted`,
  ];
  if (r.announcements) {
    const a = r.announcements;
    lines.push(
      `announcements: ${a.sent} sent, ${a.duplicatedMinutes.length} minutes duplicated, ${a.missingMinutes.length} minutes missing`,
    );
  }
  const counts = new Map<string, number>();
  for (const f of r.faults) counts.set(f.name, (counts.get(f.name) ?? 0) + 1);
  lines.push(`faults: ${[...counts].map(([n, c]) => `${n} ×${c}`).join(", ")}`);
  const saw = r.serverSaw;
  lines.push(
    `server saw: ${saw.requests} requests, ${saw.status5xx} answered 5xx, ${saw.status429} answered 429, ${saw.resets} connections reset, ${saw.hungPolls} polls hung`,
  );
  lines.push(
    `queue registrations by reason: ${Object.entries(r.registrations)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}; handler failures ${r.handlerFailures}; error log lines ${r.errorLines}`,
  );
  const m = r.memory;
  lines.push(
    `daemon RSS (last process, ${m.samples} samples): first quarter ${m.firstQuarterMb} MB, last quarter ${m.lastQuarterMb} MB (${m.growthPercent >= 0 ? "+" : ""}${m.growthPercent}%), peak ${m.peakMb} MB`,
  );
  lines.push(`daemon RSS per minute (MB): ${m.perMinuteMb.join(", ")}`);
  lines.push(`drained: ${r.drained}; daemon exit: ${r.exitCode}`);
  return lines.join("\n");
}
