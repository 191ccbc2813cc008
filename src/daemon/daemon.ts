/**
 * The daemon: every configured bot in one process, each isolated, sharing only the connection
 * pool per server and the state store. A bot whose key is rejected stops alone; the others go on.
 */
import type { Logger } from "pino";
import { BotSwitch, LEASE_STOP } from "../cluster/bot-switch.ts";
import { type Coordinator, SoloCoordinator } from "../cluster/coordinator.ts";
import type { Config } from "../config/schema.ts";
import { BothostError } from "../errors/bothost-error.ts";
import { AdminSocket, keepAdminSocket } from "../http/admin-socket.ts";
import { BothostMetrics } from "../http/bothost-metrics.ts";
import type { DaemonStatus } from "../http/daemon-status.ts";
import { requireListener } from "../http/http-config-error.ts";
import type { HttpBot, HttpListener } from "../http/http-listener.ts";
import { clearStopping, markStopping } from "../http/stopping-mark.ts";
import type { Sandbox } from "../sandbox/types.ts";
import type { DeadLetterOffice } from "../state/dead-letter-office.ts";
import { isStateError } from "../state/state-error.ts";
import type { StateBackend } from "../state/state-store.ts";
import { type Clock, realClock } from "../time/clock.ts";
import type { BotRuntime } from "./bot-runtime.ts";
import type { DaemonBot } from "./daemon-bot.ts";
import { dialogDesk } from "./dialog-desk.ts";
import { httpBotOf } from "./http-bot.ts";
import { type BotIdentity, identityOf, type ReloadPlan, type ReloadReport } from "./reload-plan.ts";
import { loggingRefusals } from "./reload-refused.ts";
import { replaceRuntime, retireOldVersions } from "./reload-retire.ts";
import { setUpNewVersions } from "./reload-setup.ts";
import { type RetryWatcher, retryWatcherFor } from "./retry-watcher.ts";
import { RuntimeFactory } from "./runtime-factory.ts";
import { ServerLooks } from "./server-check.ts";
import { type RunsNothing, StartFailures, type StartParts, startBots } from "./start-bots.ts";
import { emptyReport, type StartReport } from "./start-report.ts";
import { statusOf } from "./status-of.ts";
import { storedDialogsOf } from "./stored-dialogs.ts";

export interface DaemonOptions {
  config: Config;
  /** Loaded modules with validated settings, one per configured bot. */
  bots: DaemonBot[];
  store: StateBackend;
  log: Logger;
  /** The embedded sandbox, where the config says `url: sandbox`: its URL and the keys of its accounts. */
  sandbox?: Pick<Sandbox, "url" | "control">;
  /** Overrides for tests: long-poll margin and backoff of every bot's consumer. */
  tuning?: { longpollMarginMs?: number; backoff?: { initialMs?: number; maxMs?: number } };
  /** The one clock the daemon and its bots read and wait on; default real (tests: a ManualClock). */
  clock?: Clock;
  /** Which bots this instance runs: default all of them (a LeaseCoordinator shares them between instances). */
  coordinator?: Coordinator;
  /** The admin socket to serve the admin routes on (see admin-socket.ts); none when absent. */
  adminSocket?: { path: string; ifTaken: "fail" | "skip" };
}

export class Daemon {
  readonly bots: BotRuntime[] = [];
  readonly #o: DaemonOptions;
  /** Makes each bot's runtime and each config's dead-letter office. */
  readonly #make: RuntimeFactory;
  readonly #coordinator: Coordinator;
  readonly #switches = new Map<string, BotSwitch>();
  readonly #looks = new ServerLooks();
  /** Aborted by stop(): a reload's pending setups are given up. */
  readonly #stopping = new AbortController();
  #runsNothing: (why: RunsNothing) => void = () => {};
  /** A cluster: every bot failed to start here (at start or later; `auth`: all refused keys). */
  readonly runsNothing = new Promise<RunsNothing>((resolve) => {
    this.#runsNothing = resolve;
  });
  readonly #clock: Clock;
  readonly #startedAt: number;
  /** Why a bot failed to start, until it starts. */
  readonly #startFailures = new StartFailures(() => this.config);
  /** Served at `/metrics`; only with `http` (a reload cannot add the listener). */
  readonly metrics: BothostMetrics | undefined;
  /** The HTTP listener (with `http.listen`) and the admin socket, once listening. */
  http: HttpListener | undefined;
  adminSocket: AdminSocket | undefined;
  /** When the config in force was loaded (at construction, then at each applied reload). */
  #configLoadedAt: number;
  /** The config in force: the one given, then each reload's. */
  config: Config;
  /** Every bot's dead letters (events whose handler failed every attempt). */
  letters: DeadLetterOffice;
  /** Each bot's config entry and module, as a reload compares them. */
  readonly identities = new Map<string, BotIdentity>();
  /** Passes retry requests of dead letters to the running bots (one for all of them). */
  readonly #retries: RetryWatcher;

  constructor(options: DaemonOptions) {
    this.#o = options;
    this.#clock = options.clock ?? realClock;
    this.#configLoadedAt = this.#startedAt = this.#clock.now();
    this.config = options.config;
    this.#retries = retryWatcherFor(options.store, this.#clock, options.log);
    this.metrics = options.config.http ? new BothostMetrics() : undefined;
    const names = options.bots.map((b) => b.name);
    this.#coordinator = options.coordinator ?? new SoloCoordinator(options.store, names);
    this.#make = new RuntimeFactory({
      store: options.store,
      log: options.log,
      sandbox: options.sandbox,
      tuning: options.tuning,
      clock: this.#clock,
      coordinator: this.#coordinator,
      metrics: this.metrics,
      retries: this.#retries,
      looks: this.#looks,
    });
    this.letters = this.#make.officeFor(options.config);
    // In a cluster, every bot stands by until its lease is won.
    for (const bot of options.bots) this.#add(bot).standby = this.#coordinator.mode === "cluster";
    // Outgoing-webhook bots need the listener: refused at construction, before anything starts.
    requireListener(options.config);
  }

  /** Set when instances share the bots through leases (a reload cannot add or remove bots). */
  get cluster(): Pick<Coordinator, "holderOf"> | undefined {
    return this.#coordinator.mode === "cluster" ? this.#coordinator : undefined;
  }

  /**
   * Apply a reload planned by {@link planReload}: set up every new version first (any setup that
   * throws or outlasts its `handler_timeout` refuses the reload, `RELOAD_REFUSED`, and nothing changes), then stop removed bots
   * (their queues are deleted), restart changed ones (catch-up fetches what arrived meanwhile; the
   * delivery ledger keeps each message handled once), start added ones. Other bots are not
   * touched. In a cluster only the lease holder starts a changed bot (adding one needs a rolling restart).
   */
  async applyReload(config: Config, plan: ReloadPlan, loaded: readonly DaemonBot[]): Promise<ReloadReport> {
    const report: ReloadReport = { ...plan, failed: [] };
    const byName = new Map(loaded.map((b) => [b.name, b]));
    const starting = [...plan.restart, ...plan.add].filter((name) => byName.has(name));
    const letters = this.#make.officeFor(config);
    // In a cluster, a bot whose lease is not held here (run elsewhere, or lost) waits for a round to win it.
    const standby = new Set(plan.restart.filter((name) => !this.#coordinator.runsHere(name)));
    // Throws, with nothing stopped, when a new version's setup fails.
    const ready = await setUpNewVersions({
      bots: starting.map((name) => byName.get(name)!),
      before: this.config,
      after: config,
      standby,
      make: (bot) => this.#make.runtimeFor(bot, config, letters),
      signal: this.#stopping.signal,
      clock: this.#clock,
    });
    const old = { bots: this.bots, switches: this.#switches, startFailures: this.#startFailures, standby };
    await retireOldVersions(plan, new Set(starting), config.shutdown_timeout, old, (n) => this.#remove(n));
    // A stop that came meanwhile halted the bots it saw: the new versions must not start after it.
    if (this.#stopping.signal.aborted) {
      for (const name of plan.restart) this.#remove(name);
      await Promise.all([...ready.values()].map((r) => r.stop(0)));
      throw new BothostError("RELOAD_REFUSED", "the daemon is stopping");
    }
    this.config = config;
    this.#configLoadedAt = this.#clock.now();
    this.letters = letters;
    // Asked again after the setups: a lease lost, won or handed over meanwhile decides.
    const runHere = starting.filter((name) => this.#coordinator.runsHere(name));
    // A bot whose lease was lost here (not taken elsewhere) is stopped, as its old version was: no spare.
    const lost = (name: string) => !this.#coordinator.runsHere(name) && !!this.#coordinator.lostLease?.(name);
    for (const name of starting) {
      // A new version: this instance may run it again, even if the old one failed to start here.
      this.#coordinator.retryHere(name);
      this.#add(byName.get(name)!, ready.get(name)).standby = !runHere.includes(name) && !lost(name);
    }
    const halts = starting.filter(lost).map((name) => this.#switches.get(name)!.halt(0, false, LEASE_STOP));
    const started = emptyReport(); // startBots notes why each bot failed before reporting it
    await startBots(this.#startParts, runHere, started);
    await Promise.all(halts);
    const failed = [...started.authFailed, ...started.failed.map((f) => f.name)];
    report.failed = failed.map((name) => ({ name, error: this.#startFailures.get(name)! }));
    const { add: added, remove: removed, restart: restarted, needRestart } = plan;
    this.#o.log.info({ added, removed, restarted, needRestart, failed }, "config reloaded");
    return report;
  }

  #add(bot: DaemonBot, made?: BotRuntime): BotRuntime {
    const runtime = made ?? this.#make.runtimeFor(bot, this.config, this.letters);
    replaceRuntime(this.bots, runtime);
    this.#switches.set(runtime.name, new BotSwitch(runtime));
    this.identities.set(bot.name, identityOf(this.config, bot));
    this.http?.setBot(bot.name, this.#httpBot(runtime));
    return runtime;
  }

  #remove(name: string): void {
    const at = this.bots.findIndex((b) => b.name === name);
    if (at >= 0) this.bots.splice(at, 1);
    this.#switches.delete(name);
    this.identities.delete(name);
    this.#startFailures.delete(name);
    this.http?.setBot(name, undefined);
  }

  /**
   * Set up and start every bot this instance runs (all, unless a cluster shares them out), `registration_concurrency` at a time.
   */
  async start(): Promise<StartReport> {
    const report = emptyReport();
    const admin = this.#o.adminSocket;
    if (admin) {
      const handlers = this.#adminHandlers();
      const open = () => AdminSocket.open({ ...admin, handlers, log: this.#o.log });
      this.adminSocket = await open();
      if (admin.ifTaken === "skip") {
        const o = { path: admin.path, log: this.#o.log, signal: this.#stopping.signal, clock: this.#clock };
        keepAdminSocket(this.adminSocket, open, (socket) => (this.adminSocket = socket), o);
      }
    }
    // Listen first: /healthz and /readyz answer while bots register (webhook routes say 503).
    this.http = await this.#httpListener();
    await this.http?.start();
    let first: StartReport | undefined = report;
    await this.#coordinator.start({
      run: async (names) => {
        await startBots(this.#startParts, names, first);
        const nothing = this.#startFailures.nothingHere(this.#coordinator, [...this.#switches.keys()]);
        if (nothing) this.#runsNothing(nothing);
      },
      // No switch: a reload swaps the bot's runtime, and starts the new one if the lease is held here.
      halt: async (name, ms, elsewhere) => this.#switches.get(name)?.halt(ms, elsewhere, LEASE_STOP),
      elsewhere: (name) => this.#switches.get(name)?.spare(),
    });
    first = undefined; // bots won later are reported by their log lines only
    // State recorded with another server: the daemon stops, naming both (see server-check.ts).
    const mismatch = report.failed.find(
      (f) => isStateError(f.error) && f.error.code === "STATE_SERVER_MISMATCH",
    );
    if (mismatch) throw mismatch.error;
    const tried = new Set([...report.started, ...report.authFailed, ...report.failed.map((f) => f.name)]);
    const untried = this.bots.map((b) => b.name).filter((name) => !tried.has(name));
    // A bot held here whose start the stop cut runs nowhere: it is no spare of another instance's.
    const cut = this.#stopping.signal.aborted ? untried.filter((n) => this.#coordinator.runsHere(n)) : [];
    report.standby = untried.filter((name) => !cut.includes(name));
    // Operators and scripts wait for "daemon started": once a stop has begun it would be untrue.
    this.#o.log.info(
      {
        started: report.started.length,
        authFailed: report.authFailed,
        failed: report.failed.map((f) => f.name),
        ...(this.#coordinator.mode === "cluster" ? { standby: report.standby } : {}),
        ...(this.#stopping.signal.aborted && { cut }),
      },
      this.#stopping.signal.aborted ? "start cut short by the shutdown" : "daemon started",
    );
    return report;
  }

  get #startParts(): StartParts {
    const { config } = this;
    return {
      switches: this.#switches,
      coordinator: this.#coordinator,
      concurrency: config.registration_concurrency,
      moduleOf: (bot) => config.bots[bot]?.module,
      log: this.#o.log,
      stopping: this.#stopping.signal,
      startFailures: this.#startFailures,
      looks: this.#looks,
    };
  }

  /**
   * Set by whoever started the daemon from a config file (`bootDaemon`): reads the file again and
   * applies it. SIGHUP, `bothost reload` and `/admin/reload` call it through {@link reload}.
   */
  reloader: (() => Promise<ReloadReport>) | undefined;
  #reloading: Promise<unknown> = Promise.resolve();

  /** Reload the config from its file (see {@link reloader}); reloads run one after another. */
  reload(): Promise<ReloadReport> {
    const reloader = this.reloader;
    if (!reloader) {
      return Promise.reject(
        new BothostError("RELOAD_UNAVAILABLE", "this daemon was not started from a config file"),
      );
    }
    const run = this.#reloading.then(() => reloader());
    this.#reloading = run.catch(() => {});
    return run;
  }

  /** What `bothost status` and the `/status` page show. */
  status(): Promise<DaemonStatus> {
    return statusOf({
      startedAt: this.#startedAt,
      clock: this.#clock,
      bots: this.bots,
      letters: this.letters,
      startFailures: this.#startFailures,
      configLoadedAt: this.#configLoadedAt,
      redis: this.#o.store.redisStatus?.(),
      leaseHolder: (bot) => this.#coordinator.holderOf?.(bot),
      leasesUnread: () => this.#coordinator.leasesUnread?.(),
      leaseLost: (bot) => this.#coordinator.lostLease?.(bot),
      webhookRequests: (bot) => this.http?.webhookRequests.of(bot),
    });
  }

  /** Answer webhooks in flight, stop polling, let handlers finish, all within the shutdown timeout (`deadlineMs` 0: cut off, as a crash), flush. */
  async stop(options: { deadlineMs?: number } = {}): Promise<void> {
    if (this.#stopping.signal.aborted) return;
    this.#stopping.abort();
    this.#retries.stop();
    const socket = this.adminSocket;
    // The socket goes now (another instance sharing Redis state may take it over); the mark says
    // to the admin commands that this daemon is stopping meanwhile.
    if (socket) await markStopping(socket.path);
    await socket?.close();
    const full = options.deadlineMs ?? this.config.shutdown_timeout;
    const deadline = this.http ? await this.http.close(full) : full;
    const halted: { abandoned: number }[] = [];
    // Leases (in a cluster) stay renewed while the bots stop, then go at once; each bot reads stopped.
    await this.#coordinator.stop(async () => {
      halted.push(...(await Promise.all([...this.#switches.values()].map((s) => s.halt(deadline, false)))));
    });
    const abandoned = halted.reduce((n, r) => n + r.abandoned, 0);
    // A reload under way gives up (see applyReload): nothing of it may outlive the store.
    await this.#reloading;
    await this.#o.store.close();
    if (socket) await clearStopping(socket.path);
    this.#o.log.info({ abandoned }, "daemon stopped");
  }

  #httpBot(runtime: BotRuntime): HttpBot {
    const store = this.#coordinator.storeFor(runtime.name);
    return httpBotOf(runtime, this.config.bots[runtime.name]!, store, () => this.#o.store.commit());
  }

  /** What the admin routes act on, on the admin socket and the HTTP listener. */
  #adminHandlers() {
    // Refusals logged as for SIGHUP (`bothost dev`, calling reload() itself, words its own).
    const reload = loggingRefusals(this.#o.log, () => this.reload());
    const desk = dialogDesk(this.bots, this.#coordinator, (name) => storedDialogsOf(this.#o.store, name));
    return { letters: () => this.letters, status: () => this.status(), reload, ...desk };
  }

  /** The listener the config asks for; its code (fastify) is loaded only then. */
  async #httpListener(): Promise<HttpListener | undefined> {
    const http = this.config.http;
    const metrics = this.metrics;
    if (!http || !metrics) return undefined;
    const { HttpListener } = await import("../http/http-listener.ts");
    return new HttpListener({
      listen: http.listen,
      bodyLimit: http.body_limit,
      requestTimeoutMs: http.request_timeout,
      log: this.#o.log,
      metrics,
      admin: { token: http.admin_token, ...this.#adminHandlers() },
      startFailure: (name) => this.#startFailures.get(name),
      leaseLost: (name) => this.#coordinator.lostLease?.(name),
      leaseHolder: (name) => this.#coordinator.holderOf?.(name),
      bots: this.bots.map((runtime) => this.#httpBot(runtime)),
      clock: this.#clock,
    });
  }
}
