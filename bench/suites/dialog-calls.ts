/**
 * Store calls per dialog answer on Redis: a redis-server of the suite's own (free port, no
 * persistence), the sandbox in this process, and `bothost run` (dist/) with the steps bot
 * (bench/e2e/steps-bot.mjs) and its state in that Redis. The person asks for a dialog of `steps`
 * questions and answers each once the next question was asked and its write had a moment to land.
 * Redis's MONITOR sees every call the daemon sends (calls a script makes inside Redis are not
 * counted); a marker call from this process between answers splits them by answer, exactly
 * (Redis runs calls one at a time). Counted per answer: calls on the dialog's keys (its header
 * and log), and all the daemon's calls in that time (the delivery ledger, effect records, lease
 * renewals besides).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Redis } from "ioredis";
import { freePort } from "../../test/support/free-port.ts";
import { repoRoot, spawnDaemon } from "../lib/daemon-process.ts";
import { median, sleep } from "../lib/stats.ts";

const { startSandbox } = (await import(
  pathToFileURL(`${repoRoot}dist/testing.js`).href
)) as typeof import("../../src/testing.ts");

export interface DialogCallsRow {
  steps: number;
  /** Per answer but the last (which ends the dialog): calls on the dialog's keys, median and max. */
  dialogCalls: { p50: number; max: number };
  /** The last answer's (the end's) calls on the dialog's keys. */
  endCalls: number;
  /** Every call of the daemon per answer (median), and which commands the dialog's were. */
  allCalls: number;
  dialogCommands: string;
}

export interface DialogCallsResult {
  available: boolean;
  note: string;
  rows: DialogCallsRow[];
}

const BOT = "steps-bot@sandbox.example";
const MEMBER = "member@sandbox.example";

export async function runDialogCalls(
  options: { steps: number[] },
  say: (line: string) => void,
): Promise<DialogCallsResult> {
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-bench-calls-"));
  const port = await freePort();
  const redis: ChildProcess = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
    { stdio: "ignore" },
  );
  const failed = await new Promise<boolean>((resolve) => {
    redis.once("error", () => resolve(true));
    redis.once("spawn", () => resolve(false));
  });
  if (failed) {
    const note = "redis-server is not on PATH; not measured";
    say(`  dialog calls: ${note}`);
    return { available: false, note, rows: [] };
  }
  const url = `redis://127.0.0.1:${port}/0`;
  const sandbox = await startSandbox();
  const watcher = new Redis(url, { lazyConnect: true, retryStrategy: (n) => (n > 50 ? null : 100) });
  try {
    await untilUp(watcher);
    sandbox.control.createUser({ email: BOT, full_name: "Steps", bot: "generic", owner: MEMBER });
    const file = path.join(dir, "bothost.yaml");
    const config = [
      `server:\n  url: ${sandbox.url}`,
      `state:\n  redis: ${url}\n  prefix: calls`,
      "log:\n  level: info\n  pretty: false",
      "bots:",
      `  steps:\n    module: ${JSON.stringify(path.join(repoRoot, "bench/e2e/steps-bot.mjs"))}`,
      `    email: ${BOT}\n    api_key: ${sandbox.control.apiKeyOf(BOT)}`,
    ];
    await writeFile(file, `${config.join("\n")}\n`, { mode: 0o600 });
    const daemon = spawnDaemon(file);
    await daemon.waitForLine((l) => l.msg === "daemon started", 30_000);
    const calls: { args: string[] }[] = [];
    const monitor = await watcher.monitor();
    monitor.on("monitor", (_time: string, args: string[], source: string) => {
      if (source !== "lua") calls.push({ args });
    });
    const rows: DialogCallsRow[] = [];
    for (const steps of options.steps) {
      const botId = sandbox.control.users().find((u) => u.email === BOT)!.user_id;
      const botSaid = () => sandbox.control.messages().filter((m) => m.sender_id === botId).length;
      const dm = (content: string) => sandbox.control.sendAs(MEMBER, { type: "direct", to: [BOT], content });
      const start = botSaid();
      dm(`ask ${steps}`);
      await until(() => botSaid() === start + 1);
      const perAnswer: { dialog: string[]; all: number }[] = [];
      for (let k = 1; k <= steps; k++) {
        // Time for the question's write to land; then a marker, the answer, and the next question.
        await sleep(300);
        const from = await marked(watcher, calls, `before answer ${k}`);
        dm(`answer ${k}`);
        await until(() => botSaid() === start + 1 + k);
        await sleep(300);
        const to = await marked(watcher, calls, `after answer ${k}`);
        const window = calls.slice(from + 1, to);
        const daemonCalls = window.filter((c) => !c.args.some((a) => a.startsWith("bench-mark")));
        perAnswer.push({
          dialog: daemonCalls
            .filter((c) => c.args.some((a) => a.startsWith("calls:steps/dialogs/")))
            .map((c) => c.args[0]!.toLowerCase()),
          all: daemonCalls.length,
        });
      }
      const asking = perAnswer.slice(0, -1);
      const row: DialogCallsRow = {
        steps,
        dialogCalls: {
          p50: median(asking.map((a) => a.dialog.length)),
          max: Math.max(...asking.map((a) => a.dialog.length)),
        },
        endCalls: perAnswer.at(-1)!.dialog.length,
        allCalls: median(perAnswer.map((a) => a.all)),
        dialogCommands: asking.at(-1)?.dialog.join(", ") ?? "",
      };
      say(
        `  dialog calls, ${steps} questions: ${row.dialogCalls.p50} (max ${row.dialogCalls.max}) on the dialog's keys per answer [${row.dialogCommands}], ${row.endCalls} for the last; ${row.allCalls} calls of the daemon per answer in all`,
      );
      rows.push(row);
    }
    monitor.disconnect();
    daemon.child.kill("SIGTERM");
    await daemon.exited;
    return { available: true, note: "", rows };
  } finally {
    watcher.disconnect();
    await sandbox.stop();
    redis.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  }
}

/** Send a marker call and resolve the index at which MONITOR reported it. */
async function marked(client: Redis, calls: { args: string[] }[], label: string): Promise<number> {
  const word = `bench-mark ${label}`;
  await client.echo(word);
  await until(() => calls.some((c) => c.args.includes(word)));
  return calls.findIndex((c) => c.args.includes(word));
}

async function until(done: () => boolean, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > end) throw new Error("dialog calls bench: timed out waiting for the bot");
    await sleep(10);
  }
}

async function untilUp(client: Redis): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      await client.connect();
      return;
    } catch {
      await sleep(50);
    }
  }
  throw new Error("dialog calls bench: redis-server did not answer");
}
