/**
 * The sandbox of the many-bots bench, in a child process whose clock may run fast
 * (bench/lib/fast-clock.mjs), with the server's real limits on: `--bots N` bot accounts, bot i
 * in channel `c<i mod 20>`, and a member posting on `run` at a steady rate over the 20 channels.
 * Reports, in sandbox (simulated) time: when each message was sent (by id), 429s, and the
 * busiest minute of any bot's event-queue and other calls (sampled every 5 s).
 *
 * Usage (forked): many-bots-host.ts --bots 200 → sends { url, bots: [{ email, apiKey }] } over IPC.
 */
import { parseArgs } from "node:util";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import { serveOps } from "../lib/serve-ops.ts";

const { values } = parseArgs({ options: { bots: { type: "string", default: "200" } } });
const bots = Number(values.bots);
const CHANNELS = 20;
const MEMBER = "member@sandbox.example";
const OWNER = "owner@sandbox.example";
const email = (i: number) => `bot${i}@sandbox.example`;

const sandbox = await startSandbox({
  org: {
    realm: { name: "Busy", host: "sandbox.example" },
    users: [
      { email: OWNER, full_name: "Olive Owner", role: "owner" },
      { email: MEMBER, full_name: "Mel Member", role: "member" },
    ],
    bots: Array.from({ length: bots }, (_, i) => ({
      email: email(i),
      full_name: `Bot ${i}`,
      type: "generic" as const,
      owner: OWNER,
    })),
    channels: Array.from({ length: CHANNELS }, (_, c) => ({
      name: `c${c}`,
      subscribers: [
        OWNER,
        MEMBER,
        ...Array.from({ length: bots }, (_, i) => i)
          .filter((i) => i % CHANNELS === c)
          .map(email),
      ],
    })),
  },
});
const buckets = ["events", "other"] as const;
/** Every bot's calls so far in each bucket, and the 429s of all. */
function counts(): { calls: Record<(typeof buckets)[number], number[]>; refused: number } {
  const out = { calls: { events: [] as number[], other: [] as number[] }, refused: 0 };
  for (let i = 0; i < bots; i++)
    for (const bucket of buckets) {
      const c = sandbox.control.rateLimitCount(email(i), bucket);
      out.calls[bucket].push(c.calls);
      out.refused += c.refused;
    }
  return out;
}

async function run(args: { rate: number; seconds: number }) {
  const before = counts();
  // Every bot's calls at each simulated 5 s, for the busiest minute of any of them.
  const samples = [before];
  const sampler = setInterval(() => samples.push(counts()), 5_000);
  const sent: [number, number][] = [];
  const start = Date.now();
  let second = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = Math.min(args.seconds, Math.floor((Date.now() - start) / 1000) + 1);
      for (; second < due; second++) {
        for (let i = 0; i < args.rate; i++) {
          const { id } = sandbox.control.sendAs(MEMBER, {
            type: "channel",
            to: `c${(second * args.rate + i) % CHANNELS}`,
            topic: `t${i % 5}`,
            content: `chatter ${second}.${i}`,
          });
          sent.push([id, Date.now()]);
        }
      }
      if (second >= args.seconds) resolve();
      else setTimeout(tick, 100);
    };
    tick();
  });
  // A minute for the last messages to be polled.
  await new Promise((r) => setTimeout(r, 60_000));
  clearInterval(sampler);
  const after = counts();
  samples.push(after);
  const busiestMinute = { events: 0, other: 0 };
  for (const bucket of buckets)
    for (let t = 12; t < samples.length; t++)
      for (let i = 0; i < bots; i++) {
        const minute = (samples[t]?.calls[bucket][i] ?? 0) - (samples[t - 12]?.calls[bucket][i] ?? 0);
        busiestMinute[bucket] = Math.max(busiestMinute[bucket], minute);
      }
  return { sent, refused: after.refused - before.refused, busiestMinute };
}

serveOps(
  { run },
  {
    url: sandbox.url,
    channels: CHANNELS,
    bots: Array.from({ length: bots }, (_, i) => ({
      email: email(i),
      apiKey: sandbox.control.apiKeyOf(email(i)),
    })),
  },
);
