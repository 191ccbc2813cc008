/**
 * The stores a crash test runs a daemon on, each as the config's `state:` lines and the store
 * opened directly: the file store, and Redis when one answers (else one line says the Redis case
 * is skipped). Each Redis case gets its own key prefix, dropped after the file's tests.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect } from "vitest";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { FileStore } from "../../src/state/file-store.ts";
import { RedisStore } from "../../src/state/redis-store.ts";
import type { StateBackend } from "../../src/state/state-store.ts";
import { type CliProcess, runCli, spawnCli } from "./cli.ts";
import { botEmail } from "./e2e-daemon.ts";
import { dropPrefix, noRedisMessage, redisReachable, redisUrl, uniquePrefix } from "./redis.ts";

/** Where a test's state lives: the config's `state:` lines, and the store opened directly. */
export interface Backend {
  yaml: string;
  open(): Promise<StateBackend>;
}

/**
 * The cases a crash test runs on the store `backend` names: every case on the file store; on Redis
 * only those `onRedis` keeps. What a kill tests is the pipeline's, the same on both stores; Redis
 * differs in its commits (one script per commit) and in the restart (the killed instance's lease
 * taken over), which one case of each kind of run covers. Each spawned daemon costs about a second
 * of CPU, and the suite shares two cores.
 */
export function casesOn<T>(backend: string, cases: readonly T[], onRedis: (c: T) => boolean): T[] {
  return backend === "Redis" ? cases.filter(onRedis) : [...cases];
}

/** `[name, backendFor(dir)]` pairs for `describe.each`; `label` names the file in the skip line. */
export async function crashBackends(label: string): Promise<Array<[string, (dir: string) => Backend]>> {
  const prefixes: string[] = [];
  const backends: Array<[string, (dir: string) => Backend]> = [
    [
      "file store",
      (dir) => ({
        yaml: `state:\n  path: ${path.join(dir, "state")}`,
        open: () => FileStore.open(path.join(dir, "state"), { autoFlushMs: 0 }),
      }),
    ],
  ];
  if (await redisReachable()) {
    backends.push([
      "Redis",
      () => {
        const prefix = uniquePrefix(label);
        prefixes.push(prefix);
        return {
          // A short lease: the restarted instance takes the bot once the killed one's lease expired.
          yaml: `state:\n  redis: ${redisUrl}\n  prefix: ${prefix}\nleases:\n  ttl: 3s`,
          open: () => RedisStore.open({ url: redisUrl, prefix }),
        };
      },
    ]);
  } else {
    console.warn(`${label}: ${noRedisMessage}`);
  }
  afterAll(async () => {
    for (const prefix of prefixes) await dropPrefix(prefix);
  });
  return backends;
}

/**
 * A project in a new folder for a crash test: `bot(dir)` as `./bot.mjs`, one bot `b` on the
 * sandbox's first bot account, on `backend`, failing runs retried `attempts` times 200 ms apart.
 * `spawn` starts `bothost run` on it (`more`: environment variables, such as crash points);
 * `cli` runs another command on it (`bothost failed …`).
 */
export async function crashProject(
  sandbox: Sandbox,
  backend: (dir: string) => Backend,
  bot: (dir: string) => string,
  attempts: number,
): Promise<{
  spawn(more?: Record<string, string>): CliProcess;
  cli(args: string[]): ReturnType<typeof runCli>;
}> {
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-crash-"));
  await writeFile(path.join(dir, "bot.mjs"), bot(dir));
  const file = path.join(dir, "bothost.yaml");
  const yaml = [
    `server:\n  url: ${sandbox.url}`,
    backend(dir).yaml,
    "log:\n  level: info\n  pretty: false",
    "bots:",
    `  b:\n    module: ./bot.mjs\n    email: ${botEmail(0)}\n    api_key: \${E2E_KEY}`,
    `    retries: { attempts: ${attempts}, backoff: 200ms, max_backoff: 200ms }`,
  ];
  await writeFile(file, `${yaml.join("\n")}\n`);
  const env = { E2E_KEY: sandbox.control.apiKeyOf(botEmail(0)) };
  return {
    spawn: (more = {}) => spawnCli(["run", "--config", file], { env: { ...env, ...more } }),
    cli: (args) => runCli([...args, "--config", file], { env }),
  };
}

/**
 * Starts a daemon with `start()`, and again after each time it dies, until one logs a line
 * beginning with `kept` (each waited for 30 s at most): the daemons that died, and the one that
 * logged it. More than `most` deaths fail the test (a crash loop).
 */
export async function startUntilKept(
  start: () => CliProcess,
  kept: string,
  most: number,
): Promise<{ killed: CliProcess[]; daemon: CliProcess }> {
  const killed: CliProcess[] = [];
  for (let daemon = start(); ; daemon = start()) {
    const exited = daemon.exited.then(() => "killed" as const);
    const found = daemon
      .waitForLog((l) => String(l.msg).startsWith(kept), 30_000)
      .then(() => "kept" as const);
    // A daemon that neither died nor logged it fails the test (waitForLog's timeout).
    if ((await Promise.race([exited, found])) === "kept") return { killed, daemon };
    killed.push(daemon);
    expect(killed.length).toBeLessThanOrEqual(most);
  }
}

/**
 * A bot module whose cron job `id` runs `body` (the handler's statements, `ctx` in scope) once a
 * day, first a few seconds after the bot's first start in `dir` (the cron kept in a file there for
 * the restarts); `more`: statements added to its setup.
 */
export function jobSoon(dir: string, id: string, body: string, more = ""): string {
  const cronFile = JSON.stringify(path.join(dir, "cron"));
  return `import { existsSync, readFileSync, writeFileSync } from "node:fs";
export default { events: ["message"], setup(bot) {
  if (!existsSync(${cronFile})) {
    const at = new Date(Date.now() + 3000);
    writeFileSync(${cronFile}, at.getUTCSeconds() + " " + at.getUTCMinutes() + " " + at.getUTCHours() + " * * *");
  }
  bot.cron(readFileSync(${cronFile}, "utf8"), { id: ${JSON.stringify(id)} }, async (ctx) => { ${body} });
  ${more}
} };\n`;
}
