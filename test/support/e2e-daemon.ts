/**
 * The end-to-end fixtures: a sandbox in the test process, a config file pointing the CLI at it
 * (API keys only in the child's environment), and counting the replier bot's answers from the
 * sandbox's own record of messages.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { OrgInput, Sandbox, SandboxOptions } from "../../src/sandbox/types.ts";
import { assertBuilt, type CliProcess, killAll, repoRoot, spawnCli } from "./cli.ts";

export const REPLIER = path.join(repoRoot, "test/fixtures/e2e/replier.mjs");
export const OWNER = "owner@sandbox.example";
export const MEMBER = "member@sandbox.example";

/** What the current test opened (sandboxes, config folders), closed by {@link useE2eCleanup}. */
const opened: Array<() => Promise<unknown>> = [];

/** Close `close` (a folder, a server) after the current test, before what was opened earlier. */
export function closeAfterTest(close: () => Promise<unknown>): void {
  opened.push(close);
}

/**
 * The lifecycle of an e2e test file: dist/ must be built; after each test every daemon is killed,
 * then every sandbox and config folder the test opened is closed. `after: "all"`, for a file whose
 * tests run concurrently (each waiting out a real timeout, none touching another's sandbox, state
 * or daemons): once, after the file's tests, so that no test's end kills another's daemons.
 */
export function useE2eCleanup(after: "each" | "all" = "each"): void {
  beforeAll(assertBuilt);
  (after === "each" ? afterEach : afterAll)(async () => {
    await killAll();
    for (const close of opened.splice(0).reverse()) await close();
  });
}

/**
 * A sandbox with 1 s heartbeats and a 3 s long-poll timeout, so every recovery takes seconds;
 * `more`: other options (e.g. `onResponse`).
 */
export async function startE2eSandbox(org?: OrgInput, more: SandboxOptions = {}): Promise<Sandbox> {
  const sandbox = await startSandbox({
    heartbeatSeconds: 1,
    longpollTimeoutSeconds: 3,
    ...more,
    ...(org ? { org } : {}),
  });
  opened.push(() => sandbox.stop());
  return sandbox;
}

/** An org with `bots` generic bots, bot i subscribed only to channel `c<i>` (and the member to all). */
export function orgWithBots(bots: number, extraBotChannels: string[] = []): OrgInput {
  const names = Array.from({ length: bots }, (_, i) => i);
  return {
    realm: { name: "E2E", host: "sandbox.example" },
    users: [
      { email: OWNER, full_name: "Olive Owner", role: "owner" },
      { email: MEMBER, full_name: "Mel Member", role: "member" },
    ],
    bots: names.map((i) => ({ email: botEmail(i), full_name: `Bot ${i}`, type: "generic", owner: OWNER })),
    channels: names.map((i) => ({
      name: `c${i}`,
      subscribers: [OWNER, MEMBER, botEmail(i), ...(i === 0 ? extraBotChannels : [])],
    })),
  };
}

export const botEmail = (i: number) => `bot${i}@sandbox.example`;

export interface ConfigBot {
  email: string;
  /** Default: the account's key from the sandbox. */
  apiKey?: string;
  /** YAML lines added under the bot (e.g. `settings: { delay_ms: 300 }`). */
  extra?: string;
}

export interface E2eConfig {
  dir: string;
  file: string;
  stateDir: string;
  /** The child's environment: one E2E_KEY_<BOT> variable per bot. */
  env: Record<string, string>;
  /** Every API key the config refers to, and every key of the sandbox's accounts. */
  secrets: string[];
  cleanup(): Promise<void>;
}

/**
 * Write a config for `bots` (all running the replier module) against `sandbox`;
 * `shutdownTimeout`: its `shutdown_timeout` (default 5 s).
 */
export async function writeConfig(
  sandbox: Sandbox,
  bots: Record<string, ConfigBot>,
  options: { global?: string; stateDir?: string; shutdownTimeout?: string } = {},
): Promise<E2eConfig> {
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-e2e-"));
  const stateDir = options.stateDir ?? path.join(dir, "state");
  const env: Record<string, string> = {};
  const lines = [
    `server:\n  url: ${sandbox.url}`,
    `state:\n  path: ${stateDir}`,
    "log:\n  level: debug\n  pretty: false",
    `shutdown_timeout: ${options.shutdownTimeout ?? "5s"}`,
    "longpoll_margin: 1s",
    options.global ?? "",
    "bots:",
  ];
  for (const [name, bot] of Object.entries(bots)) {
    const variable = `E2E_KEY_${name.toUpperCase().replace(/-/g, "_")}`;
    env[variable] = bot.apiKey ?? sandbox.control.apiKeyOf(bot.email);
    lines.push(`  ${name}:\n    module: ${REPLIER}\n    email: ${bot.email}\n    api_key: \${${variable}}`);
    if (bot.extra) lines.push(bot.extra.replace(/^/gm, "    "));
  }
  const file = path.join(dir, "bothost.yaml");
  await writeFile(file, `${lines.join("\n")}\n`);
  const secrets = [...new Set([...Object.values(env), ...sandbox.control.users().map((u) => u.api_key)])];
  const cleanup = () => rm(dir, { recursive: true, force: true });
  opened.push(cleanup);
  return { dir, file, stateDir, env, secrets, cleanup };
}

/** Start `bothost run` on the config and wait until every bot has started (or failed). */
export async function startDaemon(config: E2eConfig): Promise<CliProcess> {
  const daemon = spawnCli(["run", "--config", config.file], { env: config.env });
  await daemon.waitForLog((l) => l.msg === "daemon started");
  return daemon;
}

export interface Reply {
  id: number;
  bot: string;
  /** Undefined for an unsigned answer ("handled <id> by <bot>"). */
  pid: number | undefined;
}

/** Every "handled <id> by <bot>[ pid <pid>]" answer stored in the sandbox, oldest first. */
export function replies(sandbox: Sandbox): Reply[] {
  const out: Reply[] = [];
  for (const m of sandbox.control.messages()) {
    const match = /^handled (\d+) by (\S+)(?: pid (\d+))?$/.exec(String(m.content));
    if (match)
      out.push({ id: Number(match[1]), bot: match[2]!, pid: match[3] ? Number(match[3]) : undefined });
  }
  return out;
}

/** How many answers each of `ids` got (from any bot). */
export function answerCounts(sandbox: Sandbox, ids: readonly number[]): Map<number, number> {
  const counts = new Map(ids.map((id) => [id, 0]));
  for (const r of replies(sandbox)) if (counts.has(r.id)) counts.set(r.id, counts.get(r.id)! + 1);
  return counts;
}

/** Wait until every one of `ids` has at least one answer. */
export async function waitForAnswers(sandbox: Sandbox, ids: readonly number[], timeoutMs = 15_000) {
  await expect
    .poll(() => ids.filter((id) => answerCounts(sandbox, ids).get(id) === 0), { timeout: timeoutMs })
    .toEqual([]);
}

/** Expect every one of `ids` answered exactly once. */
export function expectExactlyOnce(sandbox: Sandbox, ids: readonly number[]): void {
  const counts = answerCounts(sandbox, ids);
  expect([...counts].filter(([, n]) => n !== 1)).toEqual([]);
}

/** Send a channel message as the member; returns its id. */
export function send(sandbox: Sandbox, content: string, channel = "c0", topic = "t"): number {
  return sandbox.control.sendAs(MEMBER, { type: "stream", to: channel, topic, content }).id;
}

/** Send bot 0 a direct message as the member; returns its id. */
export function sayToBot(sandbox: Sandbox, content: string): number {
  return sandbox.control.sendAs(MEMBER, { type: "direct", to: [botEmail(0)], content }).id;
}

/** What bot 0 said, oldest first. */
export function botSaid(sandbox: Sandbox): string[] {
  const botId = sandbox.control.users().find((u) => u.email === botEmail(0))!.user_id;
  return sandbox.control
    .messages()
    .filter((m) => m.sender_id === botId)
    .map((m) => String(m.content));
}

/** No API key (nor any other secret) anywhere in the child's output. */
export function expectNoSecrets(proc: CliProcess, secrets: readonly string[]): void {
  const text = proc.stdout() + proc.stderr();
  for (const secret of secrets) expect(text.includes(secret), `a secret leaked into the output`).toBe(false);
}
