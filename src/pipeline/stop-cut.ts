/**
 * What a bot's stop cuts off, and how it is said. A bot that stops alone because its lease was lost
 * or handed over (a cluster) has that stop said once by the lease coordinator, with how many events
 * it left to the next runner: the lines each event in flight would say of it (cut off by the stop,
 * its writes refused for the lost lease) go to debug.
 */
import type { Logger } from "pino";
import type { StateErrorCode } from "../state/state-error.ts";
import { RouterError } from "./router-error.ts";

/** Why a bot stops alone when its lease is lost or handed over, said with handlers aborted then. */
export const LEASE_STOP = "its lease was lost or handed over";

/** Why a bot's old version stops when a reload restarts it: its new version starts once it stopped. */
export const RELOAD_RESTART = "a reload restarts it";
/** Why a bot stops when a reload removes it from the config. */
export const RELOAD_REMOVE = "a reload removes it";

/** Where a run the stop `stop` cut off runs again: a restarted bot's new version takes it up. */
export function againAfter(stop: string | undefined): string {
  return stop === RELOAD_RESTART ? "in the reloaded bot" : "at the next start";
}

/** A run's retries cut by the stop, kept as a letter marked for replay: `where` from {@link againAfter}. */
export const cutByStop = (where: string) =>
  `handler run cut by the bot's stop: kept for replay, it runs again ${where}`;

/** Where an event's info line of its bot's stop goes: at debug when its warn lines are (a lease's stop). */
export function cutLog(log: Logger, level: "warn" | "debug"): Pick<Logger, "info"> {
  return level === "debug" ? { info: log.debug.bind(log) } : log;
}

/** A write refused for a lost lease (`STATE_FENCED`): no outage of the store; its lines at debug. */
export function fenced(outage: { code: StateErrorCode } | undefined): boolean {
  return outage?.code === "STATE_FENCED";
}

interface Run {
  event: { type: string };
  source: string;
  letter?: unknown;
  dialog?: unknown;
}

/** A live or caught-up message's first run, aborted by the stop's deadline (the next start catches it up). */
export function cutOffMessage(run: Run, err: unknown): boolean {
  return isMessage(run) && err instanceof RouterError && err.code === "ROUTER_ABORTED";
}

/** A live or caught-up message in the ledger, or a dialog's run (not a letter's) in its log. */
export function isMessage(run: Run): boolean {
  const live = run.dialog ? !run.letter : run.source === "queue" || run.source === "catch-up";
  return live && run.event.type === "message";
}
