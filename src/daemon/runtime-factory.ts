/**
 * How the daemon makes each bot's runtime: the client on its account's shared budget, the server
 * check, the settings of its config entry, and the parts every bot of the daemon shares (commits,
 * backoff, the daemon's id); and each config's dead-letter office, retry requests passed on.
 * The daemon (daemon.ts) decides when a runtime is made; this file, what it is made of.
 */
import type { Logger } from "pino";
import type { Coordinator } from "../cluster/coordinator.ts";
import type { Config } from "../config/schema.ts";
import type { BothostMetrics } from "../http/bothost-metrics.ts";
import type { Sandbox } from "../sandbox/types.ts";
import type { DeadLetterOffice } from "../state/dead-letter-office.ts";
import type { StateBackend } from "../state/state-store.ts";
import type { Clock } from "../time/clock.ts";
import { AccountBudgets, botClient } from "./bot-client.ts";
import { BotRuntime } from "./bot-runtime.ts";
import { type BotRuntimeOptions, optionsFromConfig, SERVER_BACKOFF } from "./bot-runtime-options.ts";
import { coalesce } from "./coalesce.ts";
import type { DaemonBot } from "./daemon-bot.ts";
import { deadLetterOfficeFor } from "./dead-letter-office-for.ts";
import type { RetryWatcher } from "./retry-watcher.ts";
import { type ServerLooks, serverCheck, stateLocation } from "./server-check.ts";

/** What the factory is given by the daemon. */
export interface RuntimeFactoryParts {
  store: StateBackend;
  log: Logger;
  /** The embedded sandbox, where the config says `url: sandbox`. */
  sandbox?: Pick<Sandbox, "url" | "control"> | undefined;
  /** Overrides for tests: long-poll margin and backoff of every bot's consumer. */
  tuning?: { longpollMarginMs?: number; backoff?: { initialMs?: number; maxMs?: number } } | undefined;
  clock: Clock;
  coordinator: Coordinator;
  metrics: BothostMetrics | undefined;
  retries: RetryWatcher;
  looks: ServerLooks;
}

export class RuntimeFactory {
  readonly #p: RuntimeFactoryParts;
  readonly #flush: () => Promise<void>;
  /** Shared by every bot (a daemon may run a thousand): none of it depends on the bot. */
  readonly #shared: Pick<BotRuntimeOptions, "commit" | "syncCommit" | "backoff" | "daemonId">;
  /** Each account's call budget, kept across reloads and shared by its bots. */
  readonly #budgets: AccountBudgets;

  constructor(parts: RuntimeFactoryParts) {
    this.#p = parts;
    const { store, tuning } = parts;
    this.#budgets = new AccountBudgets(parts.clock);
    this.#flush = coalesce(() => store.flush());
    this.#shared = {
      commit: () => store.commit(),
      daemonId: crypto.randomUUID(),
      backoff: tuning?.backoff ? { ...SERVER_BACKOFF, ...tuning.backoff } : SERVER_BACKOFF,
      // A solo daemon's bots write straight into the store: if it commits synchronously
      // (FileStore), their ledgers use that. In a cluster each bot writes through its lease's fence.
      ...(parts.coordinator.mode === "solo" && store.commitNow && store.canCommitNow
        ? { syncCommit: { ready: () => store.canCommitNow!(), commit: () => store.commitNow!() } }
        : {}),
    };
  }

  /** The dead letters of `config`'s bots as this daemon sees them, retry requests passed to its bots at once. */
  officeFor(config: Config): DeadLetterOffice {
    const { store, log, clock, retries } = this.#p;
    return retries.serve(deadLetterOfficeFor(config, store, log, clock, this.#shared.daemonId));
  }

  /** A runtime of `bot` as `config` configures it, its dead letters kept in `letters`. */
  runtimeFor(bot: DaemonBot, config: Config, letters: DeadLetterOffice): BotRuntime {
    const { coordinator, metrics, sandbox, clock } = this.#p;
    const c = config.bots[bot.name];
    if (!c) throw new Error(`no config for bot ${bot.name}`);
    const log = this.#p.log.child({ bot: bot.name });
    const { client, url, onSandbox, captured, account } = botClient(bot.name, c, {
      log,
      clock,
      budgets: this.#budgets,
      ...(metrics ? { metrics } : {}),
      ...(sandbox ? { sandbox } : {}),
    });
    const checkServer = serverCheck({
      bot: bot.name,
      client,
      store: coordinator.storeFor(bot.name),
      url,
      sandbox: onSandbox,
      location: stateLocation(this.#p.store),
      log,
      backoff: this.#shared.backoff,
      clock,
      looks: this.#p.looks,
    });
    return new BotRuntime({
      checkServer,
      name: bot.name,
      definition: bot.definition,
      settings: bot.settings,
      client,
      store: coordinator.storeFor(bot.name),
      flush: this.#flush,
      ...this.#shared,
      log,
      ...optionsFromConfig(c, config.http !== undefined, bot.webhookPlaces),
      longpollMarginMs: this.#p.tuning?.longpollMarginMs ?? config.longpoll_margin,
      clock,
      ...(metrics ? { metrics: metrics.runtimeSink(bot.name) } : {}),
      letters: letters.of(bot.name),
      retryRequests: this.#p.retries,
      ...(captured ? { captured } : {}),
      ...(account && { account: { shared: account, order: Object.keys(config.bots).indexOf(bot.name) } }),
    });
  }
}
