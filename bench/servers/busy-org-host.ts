/**
 * The sandbox of the busy-organization bench, in a child process whose clock may run fast
 * (bench/lib/fast-clock.mjs): the server's real limits on, a bot account in `general`, and on
 * `run` channel traffic at a steady rate with a "ping" every few seconds. Reports, in sandbox
 * (simulated) time: the bot's calls per bucket (busiest minute and hour), 429s, and for each ping
 * the delay until the bot's "pong" was stored.
 */

import { rateBucketOf } from "../../src/sandbox/http/rate-limit.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import { serveOps } from "../lib/serve-ops.ts";
import { busiest, uniform } from "../lib/stats.ts";

const BOT = "busy-bot@sandbox.example";
const calls = { events: [] as number[], other: [] as number[] };
let refused = 0;
/** When each of the bot's answers was stored: every POST /messages over HTTP is the bot's. */
const pongTimes: number[] = [];
/** The same in `performance.now()` (sub-millisecond), for the light-traffic latency. */
const pongPerf: number[] = [];

const sandbox = await startSandbox({
  onResponse: (r) => {
    if (r.route === null || r.route === "/server_settings") return;
    if (r.status === 429) refused++;
    else calls[rateBucketOf(r.method, r.route)].push(Date.now());
    if (r.method === "POST" && r.route === "/messages" && r.status === 200) {
      pongTimes.push(Date.now());
      pongPerf.push(performance.now());
    }
  },
});
const bot = sandbox.control.createUser({
  email: BOT,
  full_name: "Busy Bot",
  bot: "generic",
  owner: "owner@sandbox.example",
  channels: ["general"],
});

// The light-traffic baseline's account (bench/e2e/bare-ping-loop.mjs), in the same channel.
const bare = sandbox.control.createUser({
  email: "bare-bot@sandbox.example",
  full_name: "Bare Loop",
  bot: "generic",
  owner: "owner@sandbox.example",
  channels: ["general"],
});

/**
 * Light traffic: `count` pings, one every `everyMs` on average (real time), each answered by
 * whichever bot listens now; the delay from the ping's acceptance to the answer's, in ms. With a
 * `seed`, arrivals are random as a user's messages are: a first wait uniform in [0, everyMs) and
 * gaps uniform in [everyMs/2, 3·everyMs/2), the same sequence for every contender given that seed.
 * Without one, pings keep a fixed grid from the call, which locks them to the contender's start:
 * a runtime's timers that run a fixed time after start (V8's post-start collections) then meet
 * the same ping in every round.
 */
async function light(args: {
  count: number;
  everyMs: number;
  seed?: number;
  limits: { perMinute: number; perHour: number };
}) {
  // Both accounts get the rule the suite gives (and tells the daemon in its config).
  for (const email of [BOT, bare.email])
    sandbox.control.setUserRateLimit(email, [
      [60, args.limits.perMinute],
      [3_600, args.limits.perHour],
    ]);
  pongPerf.length = 0;
  const next = args.seed === undefined ? undefined : uniform(args.seed);
  const gap = (first: boolean) =>
    next === undefined ? (first ? 0 : args.everyMs) : args.everyMs * (first ? next() : 0.5 + next());
  const sent: number[] = [];
  for (let i = 0; i < args.count; i++) {
    const wait = gap(i === 0);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    sandbox.control.sendAs("member@sandbox.example", {
      type: "channel",
      to: "general",
      topic: "pings",
      content: "ping",
    });
    sent.push(performance.now());
  }
  for (let i = 0; i < 100 && pongPerf.length < sent.length; i++) await new Promise((r) => setTimeout(r, 50));
  return sent.flatMap((at, k) => (pongPerf[k] === undefined ? [] : [pongPerf[k] - at]));
}

async function run(args: { rate: number; seconds: number; pingEvery: number }) {
  calls.events.length = 0;
  calls.other.length = 0;
  refused = 0;
  pongTimes.length = 0;
  // All pings go to one topic, one conversation for the bot: answered in order, so the k-th
  // answer is the k-th ping's.
  const pings: number[] = [];
  const start = Date.now();
  let second = 0;
  // One simulated second at a time: `rate` messages, the first of every `pingEvery`-th a ping.
  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = Math.min(args.seconds, Math.floor((Date.now() - start) / 1000) + 1);
      for (; second < due; second++) {
        for (let i = 0; i < args.rate; i++) {
          const ping = i === 0 && second % args.pingEvery === 0;
          sandbox.control.sendAs("member@sandbox.example", {
            type: "channel",
            to: "general",
            topic: ping ? "pings" : `t${i % 20}`,
            content: ping ? "ping" : `chatter ${second}.${i}`,
          });
          if (ping) pings.push(Date.now());
        }
      }
      if (second >= args.seconds) resolve();
      else setTimeout(tick, 100);
    };
    tick();
  });
  // Settle: up to a minute (simulated) for the last answers.
  for (let i = 0; i < 600 && pongTimes.length < pings.length; i++)
    await new Promise((r) => setTimeout(r, 100));
  const delays = pings.flatMap((sentAt, k) => {
    const answered = pongTimes[k];
    return answered === undefined ? [] : [{ at: sentAt - start, ms: answered - sentAt }];
  });
  const perMinute: Record<string, number[]> = {};
  for (const [bucket, times] of Object.entries(calls)) {
    const minutes = Math.ceil(args.seconds / 60);
    perMinute[bucket] = Array.from(
      { length: minutes },
      (_, m) => times.filter((t) => t >= start + m * 60_000 && t < start + (m + 1) * 60_000).length,
    );
  }
  return {
    pings: pings.length,
    answered: delays.length,
    delays,
    refused,
    calls: { events: calls.events.length, other: calls.other.length },
    busiestMinute: { events: busiest(calls.events, 60_000), other: busiest(calls.other, 60_000) },
    busiestHour: { events: busiest(calls.events, 3_600_000), other: busiest(calls.other, 3_600_000) },
    perMinute,
  };
}

serveOps(
  { light, run },
  { url: sandbox.url, email: BOT, apiKey: bot.api_key, bareEmail: bare.email, bareApiKey: bare.api_key },
);
