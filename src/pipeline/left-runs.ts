/**
 * Runs a stop leaves: still running {@link STOP_GRACE_MS} after its deadline aborted them (deaf to
 * their signal, or slow to settle: an aborted request that takes its time to fail). The stop then
 * goes on (flushes and closes the store), so nothing such a run does from there is recorded: it
 * ends, if ever, with its event left to the next start as one never handled. A message is caught
 * up then; a dialog's run is taken up from its log; a replayed dead letter stays marked; an
 * outgoing webhook's delivery, which the server does not send again to a bot that is down, is kept
 * here as a dead letter marked for replay, its message recorded as handled (so that a repeat of
 * the delivery runs nothing: the letter's replay runs it), as a run the abort ended is kept.
 */
import type { Logger } from "pino";
import type { AnyEvent } from "../wire/events.ts";
import type { LeftTask, QueueTask } from "./conversation-queue.ts";
import { ledgerIdOf } from "./event-fields.ts";
import type { Incoming } from "./incoming.ts";
import { sourceOf } from "./incoming.ts";
import { RouterError } from "./router-error.ts";
import { LEASE_STOP } from "./stop-cut.ts";

/** How long a stop waits, once its deadline aborted the handlers still running, for them to settle. */
export const STOP_GRACE_MS = 1_000;

/** Logged (warn) by the stop once the grace passed with handlers still running. */
export const LEFT_LINE =
  "handlers still running after the stop's grace are left: nothing they do from now on is recorded, and their events are handled at the next start";

/** Logged (warn) when a run the stop left ends. */
export const LEFT_ENDED_LINE =
  "a handler the stop had left ended: nothing of its run is recorded; its event is handled at the next start";

/** The error a left delivery's dead letter says. */
const leftError = () =>
  new RouterError(
    "ROUTER_ABORTED",
    "The bot stopped: its handler still ran 1 s after its signal aborted, and was left; replayed at the next start.",
  );

export interface LeftRunParts {
  log: Logger;
  /**
   * Keep a delivery's run the stop left as a dead letter marked for replay (the failure stage's
   * cut); false when the store refused it (logged).
   */
  keep(incoming: Incoming, conversation: string, error: Error): Promise<boolean>;
  /** Record message `id` as handled in the ledger. */
  finish(id: number): Promise<void> | undefined;
  /**
   * The task an event's own run is pushed with: a task of another (a dialog's run once its answer
   * is logged, its arg the answer) keeps nothing, its event recorded already.
   */
  entry: QueueTask<Incoming>;
}

export class LeftRuns {
  readonly #o: LeftRunParts;

  constructor(parts: LeftRunParts) {
    this.#o = parts;
  }

  /**
   * The stop (`stop`: why the bot stops alone, if it does) leaves `runs`; resolves once the
   * deliveries among them are kept. For a lost lease nothing is kept: the instance that runs the
   * bot now takes them up (its writes here would be refused).
   */
  async leave(runs: readonly LeftTask[], stop: string | undefined): Promise<void> {
    if (runs.length === 0) return;
    const level = stop === LEASE_STOP ? "debug" : "warn";
    this.#o.log[level]({ left: runs.length, graceMs: STOP_GRACE_MS, ...(stop && { stop }) }, LEFT_LINE);
    if (stop === LEASE_STOP) return;
    await Promise.all(
      runs.map(({ key, arg, run }) => {
        const incoming = arg as Incoming;
        const delivery = run === this.#o.entry && isDelivery(incoming);
        const id = delivery ? ledgerIdOf(incoming.event as AnyEvent) : undefined;
        return id === undefined ? undefined : this.#keep(incoming, key, id);
      }),
    );
  }

  async #keep(incoming: Incoming, key: string, id: number): Promise<void> {
    // Refused, it is not marked either: a repeat of the delivery by the server runs it.
    if (await this.#o.keep(incoming, key, leftError())) await this.#o.finish(id);
  }
}

/** A first run of an outgoing webhook's delivery (not a letter's replay, nor a dialog's run). */
function isDelivery(incoming: Incoming): boolean {
  return sourceOf(incoming) === "webhook" && !incoming.letter && !incoming.dialog;
}
