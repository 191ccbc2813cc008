/**
 * Starting the bots this instance runs, `registration_concurrency` at a time, and what a failed
 * start tells the coordinator: in a cluster the bot's lease goes back, so that another instance
 * runs it (or, the store out of reach, a later round anywhere).
 */
import type { Logger } from "pino";
import { AUTH_REJECTED, isAuthError } from "../api/errors.ts";
import type { BotSwitch } from "../cluster/bot-switch.ts";
import type { Coordinator } from "../cluster/coordinator.ts";
import type { Config } from "../config/schema.ts";
import { configSecrets, redact } from "../config/secrets.ts";
import { isStateError } from "../state/state-error.ts";
import { mapLimited } from "./map-limited.ts";
import type { ServerLooks } from "./server-looks.ts";
import type { StartReport } from "./start-report.ts";
import { failureLogFields, startFailure } from "./status-of.ts";
import { isRefusedDeclaration } from "./trial-setup.ts";

/**
 * Why each bot that failed to start did, in words (`bothost status`, `/readyz`, the stop's lines),
 * and which of those failures were a declaration of its setup bothost refused (the bot's code to
 * fix, as `check` says it). The words hide the config's secrets: a setup's error may quote one.
 */
export class StartFailures extends Map<string, string> {
  readonly #refused = new Set<string>();
  readonly #config: () => Config;

  /** `config`: the config in force, whose secrets the words hide. */
  constructor(config: () => Config) {
    super();
    this.#config = config;
  }

  note(name: string, error: unknown): void {
    this.set(name, redact(startFailure(error), configSecrets(this.#config())));
    if (isRefusedDeclaration(error)) this.#refused.add(name);
    else this.#refused.delete(name);
  }

  override delete(name: string): boolean {
    this.#refused.delete(name);
    return super.delete(name);
  }

  /**
   * In a cluster, whether this instance can run none of `names`: each failed to start here for a
   * reason of its own, so the others run them (or nobody). `auth` when every one of those failures
   * was a refused key, `refused` when each was a declaration of the bot's setup bothost refused.
   */
  nothingHere(coordinator: Coordinator, names: readonly string[]): RunsNothing | undefined {
    if (names.length === 0 || !names.every((name) => coordinator.refuses?.(name))) return undefined;
    if (names.every((name) => this.get(name) === AUTH_REJECTED)) return "auth";
    return names.every((name) => this.#refused.has(name)) ? "refused" : "failed";
  }
}

export interface StartParts {
  switches: ReadonlyMap<string, BotSwitch>;
  coordinator: Coordinator;
  concurrency: number;
  /** A bot's module path, for the failure's log line. */
  moduleOf(bot: string): string | undefined;
  log: Logger;
  stopping: AbortSignal;
  /** Why each bot that failed to start did (`bothost status`); cleared by its start. */
  startFailures: StartFailures;
  /** The bots started together share their look at each server (server-looks.ts). */
  looks?: ServerLooks;
}

/** Starts `names`, each failure noted in `startFailures`, in `report` and with the coordinator. */
export async function startBots(
  o: StartParts,
  names: readonly string[],
  report: StartReport | undefined,
): Promise<void> {
  const starts = () => mapLimited(names, o.concurrency, (name) => startOne(o, name, report));
  await (o.looks ? o.looks.round(starts) : starts());
}

async function startOne(o: StartParts, name: string, report: StartReport | undefined): Promise<void> {
  const runtime = o.switches.get(name);
  if (!runtime) return o.log.debug({ bot: name }, "a reload swaps the bot's runtime: the reload starts it");
  // Asked again at its turn (up to registration_concurrency start at once): a stop, or a lease
  // lost or handed over while earlier bots started, halted a bot not started yet.
  if (o.stopping.aborted || !o.coordinator.runsHere(name))
    return o.log.debug({ bot: name }, "not started: stopping, or its lease is not held here now");
  try {
    if ((await runtime.start()) === "started") report?.started.push(name);
    o.startFailures.delete(name);
  } catch (error) {
    o.startFailures.note(name, error);
    if (isAuthError(error)) report?.authFailed.push(name);
    else {
      report?.failed.push({ name, error });
      o.log.error({ bot: name, ...failureLogFields(error, o.moduleOf(name)) }, "bot failed to start");
    }
    o.coordinator.startFailed(name, isStateError(error) && error.code === "STATE_UNAVAILABLE");
  }
}

/** Why an instance of a cluster runs nothing: every key refused, every setup refused a declaration, or else. */
export type RunsNothing = "auth" | "refused" | "failed";
