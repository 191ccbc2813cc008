/**
 * Long work shown as it happens: `tasks` concurrent `ctx.progress` on one bot, each streaming
 * `chunks` chunks over `seconds` seconds (real time), against the sandbox in this process with
 * the server's rate limits on (200 calls a minute, 2,000 an hour for the bot's account). The bot
 * is the compiled package (dist/), run by the testing kit. Counted: the sandbox's 429s, each
 * task's edits and posts, the time from a task's last chunk to its final text shown (its `done()`
 * resolving), and whether every final text in the conversation is the whole streamed text
 * (whitespace at rollover cuts aside).
 */
import { pathToFileURL } from "node:url";
import { repoRoot } from "../lib/daemon-process.ts";
import { percentile, round, sleep } from "../lib/stats.ts";

const dist = pathToFileURL(`${repoRoot}dist/`);
const { defineBot } = (await import(new URL("index.js", dist).href)) as typeof import("../../src/index.ts");
const { startSandbox, runBot } = (await import(
  new URL("testing.js", dist).href
)) as typeof import("../../src/testing.ts");

export interface ProgressBenchResult {
  tasks: number;
  chunks: number;
  seconds: number;
  refused429: number;
  complete: number;
  editsPerTask: { p50: number; max: number };
  postsPerTask: { p50: number; max: number };
  lastChunkToFinalMs: { p50: number; p99: number; max: number };
  wallSeconds: number;
}

const word = (task: number, i: number) => `t${task}w${i} `;

export async function runProgress(
  o: { tasks: number; chunks: number; seconds: number },
  say: (line: string) => void,
): Promise<ProgressBenchResult> {
  const finished: { task: number; edits: number; posts: number; waitMs: number }[] = [];
  const batch = 10;
  const pause = (o.seconds * 1000) / (o.chunks / batch);
  async function* chunksOf(task: number): AsyncGenerator<string> {
    for (let i = 0; i < o.chunks; i++) {
      if (i > 0 && i % batch === 0) await sleep(pause);
      yield word(task, i);
    }
  }
  const bot = defineBot({
    setup(b) {
      b.on("message", { addressed: true }, async (ctx) => {
        const task = Number(ctx.text.split(" ")[1]);
        const progress = await ctx.progress("Working…");
        await progress.stream(chunksOf(task));
        const lastChunkAt = Date.now();
        const result = await progress.done();
        finished.push({ task, edits: result.edits, posts: result.posts, waitMs: Date.now() - lastChunkAt });
      });
    },
  });
  const sandbox = await startSandbox({ rateLimit: true });
  const started = Date.now();
  const runner = await runBot(sandbox, {
    bot,
    name: "streamer",
    config: `concurrency: ${o.tasks}\nhandler_timeout: 1h`,
  });
  say(`progress: ${o.tasks} tasks × ${o.chunks} chunks over ${o.seconds} s, server limits on`);
  const asked = Array.from({ length: o.tasks }, (_, task) =>
    runner.post("member@sandbox.example", {
      type: "stream",
      to: "general",
      topic: `task ${task}`,
      content: `@**streamer** go ${task}`,
    }),
  );
  let complete = 0;
  for (const [task, id] of asked.entries()) {
    const view = await runner.progress(id, { timeoutMs: 3_600_000 });
    const expected = Array.from({ length: o.chunks }, (_, i) => word(task, i)).join("");
    const squash = (text: string) => text.replace(/\s+/g, " ").trim();
    if (squash(view.text) === squash(expected)) complete++;
  }
  const wallSeconds = round((Date.now() - started) / 1000, 3);
  const counted = ["other", "events"] as const;
  const refused429 = counted.reduce(
    (sum, bucket) => sum + sandbox.control.rateLimitCount(runner.email, bucket).refused,
    0,
  );
  const limited = sandbox.control.requests.filter((r) => r.status === 429);
  if (limited.length > 0)
    say(
      `progress: refused calls: ${[...new Set(limited.map((r) => `${r.method} ${r.path.replace(/\d+/g, "{id}")}`))].join(", ")}`,
    );
  await runner.stop();
  await sandbox.stop();
  const edits = finished.map((f) => f.edits);
  const posts = finished.map((f) => f.posts);
  const waits = finished.map((f) => f.waitMs);
  const result: ProgressBenchResult = {
    ...o,
    refused429,
    complete,
    editsPerTask: { p50: percentile(edits, 50), max: Math.max(...edits) },
    postsPerTask: { p50: percentile(posts, 50), max: Math.max(...posts) },
    lastChunkToFinalMs: {
      p50: round(percentile(waits, 50)),
      p99: round(percentile(waits, 99)),
      max: Math.max(...waits),
    },
    wallSeconds,
  };
  say(
    `progress: 429s ${refused429}, complete ${complete}/${o.tasks}, edits/task p50 ${result.editsPerTask.p50} ` +
      `(max ${result.editsPerTask.max}), posts/task p50 ${result.postsPerTask.p50}, last chunk → final text ` +
      `p50 ${result.lastChunkToFinalMs.p50} ms, p99 ${result.lastChunkToFinalMs.p99} ms, max ${result.lastChunkToFinalMs.max} ms, ` +
      `${wallSeconds} s in all`,
  );
  return result;
}
