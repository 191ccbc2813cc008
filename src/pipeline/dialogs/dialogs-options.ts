/** What a bot's dialogs (dialogs.ts) are made with, and what they tell the dialog engine. */
import type { Logger } from "pino";
import type { StateStore } from "../../state/state-store.ts";
import type { Clock } from "../../time/clock.ts";
import type { StoreHealth } from "../store-health.ts";
import type { Membership } from "./ask-options.ts";
import type { ReadyRun } from "./dialog-entry.ts";

/** The run asking a question: its signal, and the question's message if an earlier run sent it. */
export type AskingRun = { signal: AbortSignal; earlier: number | undefined };

export interface DialogsOptions {
  /** The bot's `dialogs` namespace. */
  store: StateStore;
  /** Makes the store's writes survive a crash of this process. */
  commit(): Promise<void>;
  clock: Clock;
  log: Logger;
  /** Told of each write the store's outage fails, and of each that lands (store-health.ts). */
  health?: StoreHealth | undefined;
  /** False under `dry_run`: a dialog's first question ends the run, nothing is kept. */
  persist: boolean;
  /** False for an outgoing-webhook bot, which no reaction reaches: its questions get no buttons. */
  presses?: boolean;
  /**
   * Told when the bot needs events of `type`: reactions while a question with emoji choices waits,
   * message moves while one waits in a channel topic, message deletions while one waits.
   */
  wants?: (type: WantedEvent) => void;
  /** The bot's own user id, once known: its reactions are the buttons it put on a question, no answer. */
  selfId?: () => number | undefined;
  /** Who is in which group, with which role (for questions others may answer); nobody without it. */
  members?: Membership;
  /** The bot's commands by name, subcommands as `"standup report"`; undefined: no commands. */
  commandNames?: () => readonly string[] | undefined;
}

/**
 * What the dialogs tell the engine: a deadline passed; a dialog is ready to run (a started one, or
 * one read again, its log moved under this process, holding an answer or deadline not yet run); a
 * question an earlier run sent (`msg`, kept only now) waits: it is read back (kept-question.ts).
 */
export interface DialogSignals {
  due(id: string, conversation: string): void;
  ready(run: ReadyRun, conversation: string): void;
  kept(id: string, conversation: string, msg: number): void;
}

/** The event types waiting dialogs need their bot's queue to receive. */
export type WantedEvent = "reaction" | "update_message" | "delete_message";
