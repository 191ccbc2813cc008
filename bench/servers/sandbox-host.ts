/**
 * The sandbox in a child process, driven over IPC, for the reaction-latency benchmark: its CPU
 * (accepting messages, fanning events out, serving polls, taking the replies) is not the bot's.
 *
 * Ops: `bot` → a generic bot account { email, apiKey, userId }; `load` { from, to, rate, seconds }
 * sends direct messages at a steady rate and then reports, for each reply the bot posted
 * (content `ack <message id>`), the time from the message's acceptance to the reply's arrival.
 */
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";

const OWNER = "owner@sandbox.example";
/** Users who write to the bot: each is its own conversation, as in an organization. */
const SENDERS = 20;
/** Reply arrival times by reply message id (ms, this process's clock). */
const replyArrivals = new Map<number, number>();

const sandbox = await startSandbox({
  heartbeatSeconds: 30,
  // The rates measure the runtime, well beyond what one account may do on a real server.
  rateLimit: false,
  onResponse: (record) => {
    if (record.method === "POST" && record.route === "/messages" && record.status === 200) {
      const id = (record.body as { id?: unknown }).id;
      if (typeof id === "number") replyArrivals.set(id, performance.now());
    }
  },
});

const senders = Array.from({ length: SENDERS }, (_, i) => {
  const email = `sender${i}@sandbox.example`;
  sandbox.control.createUser({ email, full_name: `Sender ${i}` });
  return email;
});

async function load(args: { to: string; rate: number; seconds: number; settleMs: number }) {
  const to = sandbox.control.users().find((u) => u.email === args.to);
  if (!to) throw new Error(`no user ${args.to}`);
  const already = sandbox.control.messages().filter((m) => m.sender_id === to.user_id).length;
  const accepted = new Map<number, number>();
  const cpu = process.cpuUsage();
  const started = performance.now();
  let sent = 0;
  const total = Math.round(args.rate * args.seconds);
  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * args.rate));
      while (sent < due) {
        const from = senders[sent % SENDERS] as string;
        const { id } = sandbox.control.sendAs(from, {
          type: "direct",
          to: [to.user_id],
          content: `m${sent}`,
        });
        accepted.set(id, performance.now());
        sent++;
      }
      if (sent >= total) resolve();
      else setTimeout(tick, 2);
    };
    tick();
  });
  const sendSeconds = (performance.now() - started) / 1000;
  // Wait until every message has its reply (or the settle time passes).
  const deadline = performance.now() + args.settleMs;
  const replies = () => sandbox.control.messages().filter((m) => m.sender_id === to.user_id);
  while (replies().length < already + total && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  const used = process.cpuUsage(cpu);
  const serverCpu = (used.user + used.system) / 1000 / (performance.now() - started);
  const latencies: number[] = [];
  for (const m of replies()) {
    const original = /^ack (\d+)$/.exec(String(m.content));
    const arrived = replyArrivals.get(m.id as number);
    const sentAt = original ? accepted.get(Number(original[1])) : undefined;
    if (arrived !== undefined && sentAt !== undefined) latencies.push(arrived - sentAt);
  }
  return { sent: total, achievedRate: total / sendSeconds, replies: latencies.length, latencies, serverCpu };
}

process.on("message", async (raw) => {
  const msg = raw as { id: number; op: string } & Record<string, unknown>;
  try {
    let result: unknown;
    if (msg.op === "bot") {
      const email = String(msg.email);
      const user = sandbox.control.createUser({
        email,
        full_name: String(msg.name),
        bot: "generic",
        owner: OWNER,
      });
      result = { email, apiKey: user.api_key, userId: user.user_id };
    } else if (msg.op === "load") {
      result = await load(msg as unknown as Parameters<typeof load>[0]);
    } else throw new Error(`unknown op ${msg.op}`);
    process.send?.({ id: msg.id, result });
  } catch (err) {
    process.send?.({ id: msg.id, error: (err as Error).message });
  }
});
process.send?.({ type: "ready", url: sandbox.url });
process.on("disconnect", () => process.exit(0));
