/**
 * A bot module of a test's own under `bothost run` on the default sandbox, for tests that have the
 * bot kill its own process at the moment that matters (after a report, after a send): the
 * module is given the path of a flag file it writes before killing itself, so it does so once.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeAll, expect } from "vitest";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { assertBuilt, type CliProcess, killAll, spawnCli } from "./cli.ts";

export const BOT = "bot@sandbox.example";

const opened: Array<() => Promise<unknown>> = [];

/** Registers the file's cleanup: daemons killed, sandboxes stopped, directories removed. */
export function useSelfKillingBots(): void {
  beforeAll(assertBuilt);
  afterEach(async () => {
    await killAll();
    for (const close of opened.splice(0).reverse()) await close();
  });
}

/**
 * A sandbox and a config running `moduleText(flag)` as bot `bot` (its entry's extra YAML lines in
 * `botLines`), with `stateYaml` (a crash backend's) and `global` lines; `start()` spawns a daemon.
 */
export async function selfKillingBot(o: {
  moduleText: (flag: string) => string;
  stateYaml: (dir: string) => string;
  global?: string;
  botLines?: string;
}) {
  const sandbox: Sandbox = await startSandbox({ heartbeatSeconds: 1 });
  opened.push(() => sandbox.stop());
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-self-kill-"));
  opened.push(() => rm(dir, { recursive: true, force: true }));
  const flag = path.join(dir, "killed");
  const module = path.join(dir, "bot.mjs");
  await writeFile(module, o.moduleText(flag));
  const file = path.join(dir, "bothost.yaml");
  const entry = `  bot:\n    module: ${module}\n    email: ${BOT}\n    api_key: \${KEY}`;
  await writeFile(
    file,
    [
      `server:\n  url: ${sandbox.url}`,
      o.stateYaml(dir),
      "log:\n  level: info\n  pretty: false",
      ...(o.global ? [o.global] : []),
      "bots:",
      o.botLines ? `${entry}\n${o.botLines.replace(/^/gm, "    ")}` : entry,
    ].join("\n") + "\n",
  );
  const env = { KEY: sandbox.control.apiKeyOf(BOT) };
  /** `more`: extra environment, such as `BOTHOST_FAILPOINTS`. */
  const start = async (more: Record<string, string> = {}): Promise<CliProcess> => {
    const daemon = spawnCli(["run", "--config", file], { env: { ...env, ...more } });
    await daemon.waitForLog((l) => l.msg === "daemon started", 20_000);
    return daemon;
  };
  return { sandbox, flag, start };
}

/**
 * A bot whose handler waits at a gate: `moduleText(gate)` is given the path of a file that does not
 * exist until the test writes it (its handlers poll for it), and the state is in a directory.
 */
export async function gatedBot(moduleText: (gate: string) => string) {
  let gate = "";
  const bot = await selfKillingBot({
    moduleText: (flag) => {
      gate = path.join(path.dirname(flag), "gate");
      return moduleText(gate);
    },
    stateYaml: (dir) => `state:\n  path: ${path.join(dir, "state")}`,
  });
  return { ...bot, gate };
}

/** Resolves once the bot's queue holds nothing and its poll is parked: what it received is acknowledged. */
export function acknowledged(sandbox: Sandbox, email = BOT): Promise<unknown> {
  return sandbox.control.waitFor(() => {
    const queue = sandbox.control.queues().find((q) => q.email === email);
    return queue !== undefined && queue.pending_events === 0 && queue.parked;
  });
}

/** What bot `email` said, oldest first. */
export function botSaid(sandbox: Sandbox, email = BOT): string[] {
  const id = sandbox.control.users().find((u) => u.email === email)!.user_id;
  return sandbox.control
    .messages()
    .filter((m) => m.sender_id === id)
    .map((m) => String(m.content));
}

/** What bot `email` said, oldest first, once it said `count` things (within 15 s of real time). */
export async function saidAtLeast(sandbox: Sandbox, email: string, count: number): Promise<string[]> {
  await expect.poll(() => botSaid(sandbox, email).length, { timeout: 15_000 }).toBeGreaterThanOrEqual(count);
  return botSaid(sandbox, email);
}

/**
 * A bot module (text) whose cron job `id` runs daily at a time `aheadS` seconds after the bot's
 * first start, written beside `flag` so that a restart declares the same job. `job`: the
 * handler's body, with `ctx`, `FLAG` (the flag's path) and node:fs's `appendFileSync`,
 * `existsSync`, `readFileSync` and `writeFileSync` in scope; `more`: further `setup` lines, with
 * `bot`.
 */
export function dailyJobModule(flag: string, o: { id: string; aheadS: number; job: string; more?: string }) {
  return `
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
const FLAG = ${JSON.stringify(flag)};
export default {
  setup(bot) {
    if (!existsSync(FLAG + ".cron")) {
      const at = new Date(Date.now() + ${o.aheadS * 1000});
      writeFileSync(FLAG + ".cron", at.getUTCSeconds() + " " + at.getUTCMinutes() + " " + at.getUTCHours() + " * * *");
    }
    bot.cron(readFileSync(FLAG + ".cron", "utf8"), { id: ${JSON.stringify(o.id)} }, async (ctx) => {
${o.job}
    });
${o.more ?? ""}
  },
};
`;
}

/** A delivery of the guide's deploys webhook (`X-Request-Id: delivery-1`) to a daemon on `port`. */
export async function deliverDeploy(port: number) {
  const res = await fetch(`http://127.0.0.1:${port}/webhooks/bot/deploys`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-request-id": "delivery-1" },
    body: JSON.stringify({ service: "api", version: "1.4.2" }),
  });
  const body = (await res.json()) as Record<string, unknown>;
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body };
}

/** Every answer to `deliver`, sent again each second as a sender retries, until one is a 200 (within 30 s). */
export async function retriedUntilOk<T extends { status: number }>(deliver: () => Promise<T>): Promise<T[]> {
  const answers: T[] = [];
  await expect
    .poll(
      async () => {
        answers.push(await deliver());
        return answers.at(-1)!.status;
      },
      { timeout: 30_000, interval: 1_000 },
    )
    .toBe(200);
  return answers;
}
