/**
 * Dispatch throughput: message events per second from the server's queue to a no-op handler.
 *
 * (a) bare: an undici long-poll loop that parses the JSON and acknowledges (the floor of any
 *     client); (b) bothost: a BotRuntime with validation, dedup, conversation ordering, routing,
 *     the delivery ledger and the FileStore; (c) zulip-js `callOnEachEvent`. All read the same
 *     pre-serialized events from one event server in a child process, alternating, several rounds.
 *
 * (a) and (b) are timed from their registered queue to their last handled event: throughput from
 * the queue, not the cost of starting (a temp directory, a state store, fsyncs), which the scale
 * suite measures. Both get a whole round to warm up first: their later rounds kept getting faster
 * for about half a million events (the JIT), bothost's more than the bare loop's.
 */
import { createRequire } from "node:module";
import { Pool } from "undici";
import { forkChild } from "../lib/child.ts";
import { startBenchRuntime } from "../lib/runtime.ts";
import { median, round } from "../lib/stats.ts";

export interface DispatchOptions {
  events: number;
  batch: number;
  rounds: number;
}

export interface ContenderRun {
  events: number;
  seconds: number;
  perSecond: number;
  /** Client CPU (user + system) per event, µs. */
  cpuMicrosPerEvent: number;
}

export interface DispatchResult {
  options: DispatchOptions;
  server: string;
  runs: Record<"bare" | "bothost" | "zulipJs", ContenderRun[]>;
  median: Record<"bare" | "bothost" | "zulipJs", number>;
  /** Ratios of the medians, and b/a within each round (the two ran back to back). */
  ratios: { bothostOverBare: number; bothostOverZulipJs: number; bothostOverBarePerRound: number[] };
}

/** Runs one round; returns the part that is timed (registered queue → last event). */
type Contender = (url: string, events: number) => Promise<Timed | undefined>;

export interface Timed {
  events: number;
  ms: number;
  cpu: NodeJS.CpuUsage;
}

/** Start timing now; `stop(events)` gives the interval. */
function stopwatch(): { stop(events: number): Timed } {
  const cpu = process.cpuUsage();
  const started = performance.now();
  return { stop: (events) => ({ events, ms: performance.now() - started, cpu: process.cpuUsage(cpu) }) };
}

const API_KEY = "BenchKey0123456789abcdefABCDEFGH";
const email = (limit: number) => `limit-${limit}@bench.example`;

/** (a) The floor: poll, JSON.parse, acknowledge by sending the newest id with the next poll. */
const bare: Contender = async (url, events) => {
  const pool = new Pool(url);
  const headers = {
    authorization: `Basic ${Buffer.from(`${email(events)}:${API_KEY}`).toString("base64")}`,
    "content-type": "application/x-www-form-urlencoded",
  };
  const reg = await pool.request({ path: "/api/v1/register", method: "POST", headers, body: "" });
  const { queue_id, last_event_id } = (await reg.body.json()) as { queue_id: string; last_event_id: number };
  let last = last_event_id;
  let seen = 0;
  const watch = stopwatch();
  while (seen < events) {
    const res = await pool.request({
      path: `/api/v1/events?queue_id=${queue_id}&last_event_id=${last}`,
      method: "GET",
      headers,
    });
    const body = JSON.parse(await res.body.text()) as { events: { id: number }[] };
    for (const event of body.events) {
      last = event.id;
      seen++;
    }
  }
  const timed = watch.stop(seen);
  await pool.destroy();
  return timed;
};

/** (b) bothost: the whole runtime path, handler `bot.on("message", …)` doing nothing but count. */
export const bothost = async (url: string, events: number): Promise<Timed> => {
  let handled = 0;
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  const bench = await startBenchRuntime({
    url,
    email: email(events),
    apiKey: API_KEY,
    setup: (bot) => {
      bot.on("message", () => {
        if (++handled === events) done();
      });
    },
  });
  await bench.runtime.start();
  // The consumer polls in the background once the queue is registered: count only what follows.
  const before = handled;
  const watch = stopwatch();
  await finished;
  const timed = watch.stop(events - before);
  await bench.close();
  if (bench.problems.length > 0) throw new Error(`bothost logged problems: ${bench.problems.join("\n")}`);
  return timed;
};

/** (c) zulip-js: its loop cannot be stopped; the server parks its queue past `events`. */
const zulipJs: Contender = async (url, events) => {
  const require = createRequire(import.meta.url);
  const zulipInit = require("zulip-js") as (config: Record<string, string>) => Promise<{
    callOnEachEvent(cb: (event: { type: string }) => void, types?: string[]): Promise<void>;
  }>;
  const client = await zulipInit({ realm: url, username: email(events), apiKey: API_KEY });
  await new Promise<void>((resolve) => {
    let handled = 0;
    void client.callOnEachEvent(
      (event) => {
        if (event.type === "message" && ++handled === events) resolve();
      },
      ["message"],
    );
  });
  return undefined; // timed whole: it sleeps 1 s per poll, so starting is noise next to that
};

async function timed(contender: Contender, url: string, events: number): Promise<ContenderRun> {
  const whole = stopwatch();
  const t = (await contender(url, events)) ?? whole.stop(events);
  const seconds = t.ms / 1000;
  return {
    events: t.events,
    seconds: round(seconds, 4),
    perSecond: Math.round(t.events / seconds),
    cpuMicrosPerEvent: round((t.cpu.user + t.cpu.system) / t.events, 3),
  };
}

export async function runDispatch(
  options: DispatchOptions,
  say: (line: string) => void,
): Promise<DispatchResult> {
  const server = await forkChild("servers/event-server.ts", [
    "--total",
    String(options.events),
    "--batch",
    String(options.batch),
  ]);
  const url = `http://127.0.0.1:${server.ready.port as number}`;
  // The server is left running until this process exits (it then exits too): zulip-js's loop
  // cannot be stopped, and once the server is gone it logs an error every second.
  // zulip-js sleeps 1 s after every poll, so a few batches measure its steady rate.
  const zulipEvents = options.batch * 3;
  {
    // Warm-up (JIT, connection pools, module loading): a whole round each, not recorded.
    await bare(url, options.events);
    await bothost(url, options.events);
    const runs: DispatchResult["runs"] = { bare: [], bothost: [], zulipJs: [] };
    for (let round = 1; round <= options.rounds; round++) {
      runs.bare.push(await timed(bare, url, options.events));
      runs.bothost.push(await timed(bothost, url, options.events));
      runs.zulipJs.push(await timed(zulipJs, url, zulipEvents));
      const last = (k: keyof typeof runs) => runs[k].at(-1)?.perSecond;
      say(
        `  dispatch round ${round}: bare ${last("bare")}/s, bothost ${last("bothost")}/s, zulip-js ${last("zulipJs")}/s`,
      );
    }
    const med = {
      bare: median(runs.bare.map((r) => r.perSecond)),
      bothost: median(runs.bothost.map((r) => r.perSecond)),
      zulipJs: median(runs.zulipJs.map((r) => r.perSecond)),
    };
    return {
      options,
      server: `purpose-built event server in a child process, ${options.batch} pre-serialized events per poll`,
      runs,
      median: med,
      ratios: {
        bothostOverBare: round(med.bothost / med.bare, 3),
        bothostOverZulipJs: round(med.bothost / med.zulipJs, 3),
        bothostOverBarePerRound: runs.bothost.map((b, i) =>
          round(b.perSecond / (runs.bare[i]?.perSecond ?? 1), 2),
        ),
      },
    };
  }
}
