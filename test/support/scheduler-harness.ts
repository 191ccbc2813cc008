/**
 * A sandbox and a daemon sharing ONE ManualClock: the sandbox's time is the clock's, and the
 * daemon's scheduler reads and waits on the same clock. `advanceTo` moves both and lets the
 * sandbox deliver what is due. The daemon can be stopped and started again on the same state
 * directory (a restart), with a different bot definition (an edit) if wanted.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createClient } from "../../src/api/create-client.ts";
import type { BotApi } from "../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import { loadConfig } from "../../src/config/load-config.ts";
import type { BotRuntime } from "../../src/daemon/bot-runtime.ts";
import { Daemon } from "../../src/daemon/daemon.ts";
import { createLogger } from "../../src/log/create-logger.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { FileStore } from "../../src/state/file-store.ts";
import { gatedBackend, type StoreGate } from "./gated-store.ts";
import { ManualClock } from "./manual-clock.ts";

export const BOT = "herald-bot@sandbox.example";
export const MEMBER = "member@sandbox.example";

export type ScheduledRow = {
  scheduled_message_id: number;
  sender_id: number;
  type: string;
  to: number | number[];
  topic: string;
  content: string;
  scheduled_delivery_timestamp: number;
  failed: boolean;
  delivered: boolean;
};

export interface SchedulerWorld {
  sandbox: Sandbox;
  clock: ManualClock;
  botId: number;
  logs: Record<string, unknown>[];
  /** Start the daemon with one bot "herald" (stops a running one first). */
  start(
    setup: ((bot: BotApi) => void) | BotDefinition<never, never>,
    settings?: unknown,
  ): Promise<BotRuntime>;
  /** Stop the daemon (the state stays for the next start). */
  stop(): Promise<void>;
  /** Move the shared clock (firing the daemon's timers) and let the sandbox deliver what is due. */
  advanceTo(iso: string | number): Promise<void>;
  /** The bot's undelivered scheduled messages on the server, by time. */
  pending(): ScheduledRow[];
  /** Messages the bot sent, as the sandbox stores them. */
  sent(): { id: number; content: string; timestamp: number; topic: string; stream_id: number | null }[];
  /** Call `fn` with the running daemon (its dead letters, its bots). */
  withDaemon<T>(fn: (daemon: Daemon) => T): T;
  /** Open the daemon's state store (while it is stopped) to read or tamper with it. */
  withState(fn: (store: FileStore) => Promise<void>): Promise<void>;
  /** A client authenticated as the bot (for setting up server state by hand). */
  botClient(): ReturnType<typeof createClient>;
  dispose(): Promise<void>;
}

export async function createWorld(
  startIso: string,
  /**
   * `expiry`: "clock" for a store whose keys expire by the shared clock (default: by the real one).
   * `gate`: the writes of the bot's bookings (`herald/bookings`) go through it.
   * `queueTimeoutSeconds`: how long the sandbox keeps an idle queue (default 600, as the server).
   * `serverBehindMs`: the sandbox's clock runs this much behind the daemon's (two machines' clocks).
   */
  options: {
    botSettings?: string;
    expiry?: "clock";
    gate?: StoreGate;
    queueTimeoutSeconds?: number;
    serverBehindMs?: number;
  } = {},
): Promise<SchedulerWorld> {
  const clock = new ManualClock(Date.parse(startIso));
  const behind = options.serverBehindMs ?? 0;
  const sandbox = await startSandbox({
    heartbeatSeconds: 1,
    clock: { now: () => clock.now() - behind },
    ...(options.queueTimeoutSeconds ? { queueTimeoutSeconds: options.queueTimeoutSeconds } : {}),
  });
  const bot = sandbox.control.createUser({
    email: BOT,
    full_name: "Herald",
    bot: "generic",
    owner: "owner@sandbox.example",
    channels: ["general"],
  });
  const dir = await mkdtemp(join(tmpdir(), "bothost-scheduler-"));
  const stateDir = join(dir, "state");
  const file = join(dir, "bothost.yaml");
  await writeFile(
    file,
    [
      `server:\n  url: ${sandbox.url}`,
      `state:\n  path: ${stateDir}`,
      "bots:",
      `  herald:\n    module: ./unused.ts\n    email: ${BOT}\n    api_key: \${KEY}`,
      options.botSettings ?? "",
    ].join("\n"),
  );
  const config = await loadConfig(file, { env: { KEY: sandbox.control.apiKeyOf(BOT) } });
  const logs: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n")) if (line) logs.push(JSON.parse(line));
      if (process.env.DEBUG_DAEMON) process.stderr.write(chunk);
      done();
    },
  });
  const log = createLogger({ destination, pretty: false, level: "debug" });
  let daemon: Daemon | undefined;

  const world: SchedulerWorld = {
    sandbox,
    clock,
    botId: bot.user_id,
    logs,
    async start(setup, settings) {
      await world.stop();
      const files = await FileStore.open(stateDir, options.expiry ? { now: () => clock.now() } : {});
      const store = options.gate ? gatedBackend(files, ["herald", "bookings"], options.gate) : files;
      const definition =
        typeof setup === "function" ? ({ setup } as unknown as BotDefinition<never, never>) : setup;
      daemon = new Daemon({
        config,
        bots: [{ name: "herald", definition, settings }],
        store,
        log,
        clock,
        tuning: { backoff: { initialMs: 20, maxMs: 200 } },
      });
      const report = await daemon.start();
      if (report.started.length !== 1) throw new Error(`daemon did not start: ${JSON.stringify(report)}`);
      return daemon.bots[0]!;
    },
    async stop() {
      await daemon?.stop();
      daemon = undefined;
    },
    async advanceTo(iso) {
      await clock.tickTo(typeof iso === "number" ? iso : Date.parse(iso));
      sandbox.control.advanceClock(0);
    },
    pending: () =>
      (sandbox.control.scheduled() as unknown as ScheduledRow[])
        .filter((s) => s.sender_id === bot.user_id && !s.delivered)
        .sort((a, b) => a.scheduled_delivery_timestamp - b.scheduled_delivery_timestamp),
    sent: () =>
      sandbox.control.messages().filter((m) => m.sender_id === bot.user_id) as unknown as ReturnType<
        SchedulerWorld["sent"]
      >,
    withDaemon(fn) {
      if (!daemon) throw new Error("the daemon is not running");
      return fn(daemon);
    },
    async withState(fn) {
      const store = await FileStore.open(stateDir);
      try {
        await fn(store);
      } finally {
        await store.close();
      }
    },
    botClient: () =>
      createClient({ url: sandbox.url, email: BOT, apiKey: sandbox.control.apiKeyOf(BOT), retry: false }),
    async dispose() {
      await world.stop();
      await sandbox.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return world;
}

/** The ISO time of a UNIX-seconds timestamp, for readable assertions. */
export const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
