/**
 * Boot a daemon from a config file: load and validate the config and every bot module, start the
 * embedded sandbox where the config says `url: sandbox`, open the state store, build the daemon.
 * `bothost run` and `bothost demo` both start this way.
 */
import type { DestinationStream } from "pino";
import { botFingerprints, type LoadedBot, loadBots, loadConfigForBots } from "../bot/load-bots.ts";
import { namedIn } from "../bot/named-settings.ts";
import { openState } from "../cluster/open-state.ts";
import { adminSocketPath } from "../config/admin-socket-path.ts";
import { ConfigError, isConfigError } from "../config/config-error.ts";
import type { Config } from "../config/schema.ts";
import { BothostError } from "../errors/bothost-error.ts";
import { createLogger } from "../log/create-logger.ts";
import type { Sandbox, SandboxOptions } from "../sandbox/types.ts";
import { type Clock, realClock } from "../time/clock.ts";
import { Daemon } from "./daemon.ts";
import type { DaemonBot } from "./daemon-bot.ts";
import { type BotIdentity, entryHash, planReload, type ReloadReport, withFixedOf } from "./reload-plan.ts";
import { checkSandboxAccounts, outgoingAccountProblem } from "./sandbox-accounts.ts";
import { unseenAfterReload } from "./unseen-names.ts";

export type Booted = Awaited<ReturnType<typeof bootDaemon>>;

export interface BootOptions {
  /** Override the config's state directory (the demo uses a temporary one). */
  statePath?: string;
  /** Override the config's log level. */
  logLevel?: string;
  /** Where the log lines go instead of stdout (tests read them). */
  logDestination?: DestinationStream;
  /** `log.pretty: auto` means readable lines even off a terminal (`bothost dev` is read by a person). */
  readableLogs?: boolean;
  /** Extra options for an embedded sandbox. */
  sandbox?: Omit<SandboxOptions, "org" | "port">;
  /**
   * The bots' schedulers read time from the embedded sandbox's clock (the demo moves it forward
   * to make an announcement come due).
   */
  clockFromSandbox?: boolean;
  /** The clock the daemon and its bots read and wait on (tests: a held TestClock); default real. */
  clock?: Clock;
  /** Evaluate the bot modules again, not from the cache (`bothost dev` booting again after an edit). */
  fresh?: boolean;
}

/** Throws ConfigError / ModuleError (located, for the user to fix) before anything starts. */
export async function bootDaemon(configPath: string, options: BootOptions = {}) {
  const fresh = options.fresh ? { fresh: true } : {};
  const { config, source } = await loadConfigForBots(configPath, fresh);
  const loaded = await loadBots(config, source, fresh);
  const pretty = options.readableLogs && config.log.pretty === "auto" ? true : config.log.pretty;
  const log = createLogger({
    level: options.logLevel ?? config.log.level,
    pretty,
    ...(options.logDestination ? { destination: options.logDestination } : {}),
  });
  let sandbox: Sandbox | undefined;
  if (Object.values(config.bots).some((b) => b.server.url === "sandbox")) {
    const s = config.server?.sandbox;
    // Loaded only here: a daemon for a real server never needs the sandbox's code.
    const { startSandbox } = await import("../sandbox/start-sandbox.ts");
    sandbox = await startSandbox({
      ...options.sandbox,
      ...(s?.org ? { org: s.org } : {}),
      port: s?.port ?? 0,
    });
  }
  try {
    if (sandbox) {
      checkSandboxAccounts(config, source, sandbox.control);
      log.info({ url: sandbox.url }, "embedded sandbox started");
      for (const [bot, entry] of Object.entries(config.bots)) {
        const problem = outgoingAccountProblem(bot, entry, sandbox.control);
        if (problem)
          log.warn(
            { bot, problem },
            "the embedded sandbox's account of an outgoing-webhook bot would not reach it",
          );
      }
    }
    // state.path: this instance runs every bot; state.redis: instances share them by leases.
    const { store, coordinator, reportRedis } = await openState(config, log, options.statePath);
    const embedded = sandbox;
    // The clock given; or real timers, with "now" read from the sandbox's (movable) clock.
    const clock: Clock | undefined =
      options.clock ??
      (options.clockFromSandbox && embedded
        ? { ...realClock, now: () => embedded.control.now() }
        : undefined);
    const daemon = new Daemon({
      ...(clock ? { clock } : {}),
      config,
      bots: loaded.map(daemonBot),
      store,
      ...(coordinator ? { coordinator } : {}),
      log,
      ...(embedded ? { sandbox: embedded } : {}),
      adminSocket: adminSocketOf(config, configPath, options.statePath),
    });
    daemon.reloader = () => reloadFromFile(daemon, configPath, embedded);
    const metrics = daemon.metrics;
    if (metrics && reportRedis) reportRedis((connection) => metrics.redisSink(connection));
    return {
      config,
      daemon,
      log,
      /** The embedded sandbox, when the config asked for one. */
      sandbox,
      /** Stop the daemon (queues deleted, state flushed), then the sandbox. */
      stop: async () => {
        await daemon.stop();
        await sandbox?.stop();
      },
    };
  } catch (err) {
    await sandbox?.stop();
    throw err;
  }
}

/**
 * A reload from the config file: read and validate the new config and every changed module in
 * full first (any problem rejects the reload, located at its file:line:column, and the daemon
 * keeps running the old config), then apply only what changed.
 */
async function reloadFromFile(daemon: Daemon, configPath: string, sandbox?: Sandbox): Promise<ReloadReport> {
  const { config, source } = await loadConfigForBots(configPath, { fresh: true }).catch(startedWith);
  const prints = await botFingerprints(config, source);
  const next = new Map<string, BotIdentity>(
    Object.entries(config.bots).map(([name, bot]) => [
      name,
      { entry: entryHash(bot), module: prints.get(name)! },
    ]),
  );
  const plan = planReload({ config: daemon.config, bots: daemon.identities }, { config, bots: next });
  if (daemon.cluster && (plan.add.length > 0 || plan.remove.length > 0)) {
    throw new BothostError(
      "RELOAD_REFUSED",
      `bots added (${plan.add.join(", ") || "none"}) or removed (${plan.remove.join(", ") || "none"}): ` +
        "instances sharing bots through Redis take such changes by a rolling restart, one instance after another",
    );
  }
  // The listener's routes are fixed at start (an added bot's `before` is undefined).
  for (const name of [...plan.restart, ...plan.add]) {
    const before = daemon.config.bots[name]?.outgoing_webhook?.path;
    if (before !== config.bots[name]?.outgoing_webhook?.path)
      plan.needRestart.push(`bots.${name}.outgoing_webhook.path`);
  }
  const changed = new Set([...plan.add, ...plan.restart]);
  if (sandbox) checkSandboxAccounts(config, source, sandbox.control, changed);
  const loaded = changed.size === 0 ? [] : await loadBots(config, source, { only: changed, fresh: true });
  // The listener, store and sandbox stay as started: the next reload compares with those.
  const report = await daemon.applyReload(withFixedOf(daemon.config, config), plan, loaded.map(daemonBot));
  // A changed bot another instance runs (or none: its lease lost here) was not restarted here.
  const failed = new Set(report.failed.map((f) => f.name));
  const idle = (name: string) =>
    ["standby", "stopped"].includes(daemon.bots.find((b) => b.name === name)?.status.state ?? "");
  const { cluster } = daemon;
  if (cluster) {
    report.notHere = [...plan.add, ...plan.restart].filter((name) => !failed.has(name) && idle(name));
    report.runsNowhere = report.notHere.filter((name) => cluster.holderOf?.(name) === undefined);
    const runsOn = report.notHere.flatMap((name) => {
      const holder = cluster.holderOf?.(name);
      return holder === undefined ? [] : [[name, holder] as const];
    });
    if (runsOn.length > 0) report.runsOn = Object.fromEntries(runsOn);
  }
  // As each start warns in the log, said to the operator who reloaded (`bothost check` locates them too).
  const here = loaded.filter((b) => !failed.has(b.name) && !report.notHere?.includes(b.name));
  const named = here.map((b) => ({
    name: b.name,
    named: namedIn(b.definition.settings, b.settings, ["bots", b.name, "settings"]),
    client: daemon.bots.find((r) => r.name === b.name)?.contextDeps().api,
  }));
  const warnings = await unseenAfterReload(named, source);
  if (warnings.length > 0) report.warnings = warnings;
  return report;
}

/** The admin socket: in the state directory, or for Redis state a per-user folder (admin-socket-path.ts). */
function adminSocketOf(config: Config, configPath: string, statePath: string | undefined) {
  const dir = statePath ?? config.state.path;
  return dir !== undefined
    ? { path: adminSocketPath({ path: dir }), ifTaken: "fail" as const }
    : { path: adminSocketPath({ redis: true, configFile: configPath }), ifTaken: "skip" as const };
}

function daemonBot(b: LoadedBot): DaemonBot {
  return {
    name: b.name,
    definition: b.definition as never,
    settings: b.settings,
    fingerprint: b.fingerprint,
    webhookPlaces: b.webhookPlaces,
  };
}

/**
 * A config file gone since the start: the daemon reloads only the file it was started with, so
 * the start's advice (name another file with --config) is replaced by what a reload can use.
 */
function startedWith(err: unknown): never {
  if (!isConfigError(err) || err.code !== "CONFIG_NOT_FOUND") throw err;
  const message =
    "cannot be read: there is no such file; a reload reads the file the daemon was started with: " +
    "put it back there (another file takes a restart with --config FILE)";
  throw new ConfigError(
    "CONFIG_NOT_FOUND",
    err.problems.map((p) => ({ ...p, message })),
    { cause: err },
  );
}
