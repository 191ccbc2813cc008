/**
 * The sandbox of the dialogs bench, in a child process, the server's rate limits on. Ops:
 * `bot` { channel, email, name, perMinute, perHour } → a bot account in `channel` (each bot
 * has its own) with the given rules (as an administrator can give an account); `open` { channel,
 * prefix, count, content, rate } sends `count` messages, each in its own topic, from the members
 * in turn (a person may have 20 dialogs of a bot waiting), at `rate` a second, and waits for as
 * many messages posted by the bots; `exchange` { channel, topic, content } sends one and
 * times the next message a bot posts (ms, with that message), sent by whoever opened that topic; `pings` { channel, mention, count, everyMs,
 * seed } sends `@**mention** ping` in topic `pings` at random times and times each answer.
 */
import { defaultOrg } from "../../src/sandbox/org/default-org.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import { uniform } from "../lib/stats.ts";

const MEMBER = "member@sandbox.example";
/** Who opens the dialogs, in turn (the first is MEMBER): 10,000 dialogs are 10 per person. */
const OPENERS = [MEMBER, ...Array.from({ length: 999 }, (_, i) => `opener-${i + 1}@sandbox.example`)];
/** The member who opened each topic. */
const openedBy = new Map<string, string>();
/** Every message a bot posted over HTTP: its id and when it was stored (`performance.now()`). */
const posts: { id: number; at: number }[] = [];

/** A channel per bot, so that each bot sees only its own traffic. */
const CHANNELS = ["plain", "dialogs", "latency"];
const org = defaultOrg();
for (const name of CHANNELS) org.channels?.push({ name, subscribers: [MEMBER] });

for (const email of OPENERS.slice(1)) org.users?.push({ email, full_name: email.split("@")[0]! });
for (const channel of org.channels ?? [])
  if (CHANNELS.includes(channel.name)) channel.subscribers?.push(...OPENERS.slice(1));

const sandbox = await startSandbox({
  org,
  onResponse: (r) => {
    if (r.method === "POST" && r.route === "/messages" && r.status === 200) {
      const id = (r.body as { id?: unknown }).id;
      if (typeof id === "number") posts.push({ id, at: performance.now() });
    }
  },
});

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves once `posts` holds `count` entries, polling every `everyMs`. */
async function postsReach(count: number, timeoutMs: number, everyMs = 1): Promise<void> {
  const until = performance.now() + timeoutMs;
  while (posts.length < count) {
    if (performance.now() > until)
      throw new Error(`${posts.length} of ${count} bot messages within ${timeoutMs} ms`);
    await tick(everyMs);
  }
}

const say = (channel: string, topic: string, content: string) =>
  sandbox.control.sendAs(openedBy.get(topic) ?? MEMBER, { type: "channel", to: channel, topic, content });

async function open(args: { channel: string; prefix: string; count: number; content: string; rate: number }) {
  const base = posts.length;
  const started = performance.now();
  for (let sent = 0; sent < args.count; ) {
    const due = Math.min(args.count, Math.floor(((performance.now() - started) / 1000) * args.rate) + 1);
    for (; sent < due; sent++) {
      openedBy.set(`${args.prefix}${sent}`, OPENERS[sent % OPENERS.length]!);
      say(args.channel, `${args.prefix}${sent}`, args.content);
    }
    await tick(5);
  }
  await postsReach(base + args.count, 600_000, 20);
  return { seconds: (performance.now() - started) / 1000 };
}

async function exchange(args: { channel: string; topic: string; content: string }) {
  const base = posts.length;
  const sentAt = performance.now();
  say(args.channel, args.topic, args.content);
  await postsReach(base + 1, 60_000);
  const post = posts[base] as { id: number; at: number };
  const view = sandbox.control.messageView(post.id);
  return { ms: post.at - sentAt, topic: view?.subject, content: view?.content };
}

async function pings(args: {
  channel: string;
  mention: string;
  count: number;
  everyMs: number;
  seed: number;
}) {
  const base = posts.length;
  const next = uniform(args.seed);
  const sent: number[] = [];
  for (let i = 0; i < args.count; i++) {
    await tick(args.everyMs * (i === 0 ? next() : 0.5 + next()));
    say(args.channel, "pings", `@**${args.mention}** ping`);
    sent.push(performance.now());
  }
  await postsReach(base + args.count, 10_000).catch(() => {});
  // One conversation: answered in order, so the k-th answer is the k-th ping's.
  return sent.flatMap((at, k) => {
    const post = posts[base + k];
    return post === undefined ? [] : [post.at - at];
  });
}

function bot(args: { channel: string; email: string; name: string; perMinute: number; perHour: number }) {
  const user = sandbox.control.createUser({
    email: args.email,
    full_name: args.name,
    bot: "generic",
    owner: "owner@sandbox.example",
    channels: [args.channel],
  });
  sandbox.control.setUserRateLimit(args.email, [
    [60, args.perMinute],
    [3_600, args.perHour],
  ]);
  return { channel: args.channel, email: args.email, apiKey: user.api_key, name: args.name };
}

const ops: Record<string, (args: never) => unknown> = { bot, open, exchange, pings };

process.on("message", async (raw) => {
  const msg = raw as { id: number; op: string } & Record<string, unknown>;
  try {
    const op = ops[msg.op];
    if (op === undefined) throw new Error(`unknown op ${msg.op}`);
    process.send?.({ id: msg.id, result: await op(msg as never) });
  } catch (err) {
    process.send?.({ id: msg.id, error: (err as Error).message });
  }
});
process.send?.({ type: "ready", url: sandbox.url });
process.on("disconnect", () => process.exit(0));
