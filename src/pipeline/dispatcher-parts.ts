/**
 * What a bot's pipeline (dispatcher.ts, runs.ts) is built from, as its composition root
 * (daemon/wire-bot.ts) hands it over.
 */
import type { Logger } from "pino";
import type { BotServices } from "../effects/bot-services.ts";
import type { EffectRecords } from "../effects/effect-records.ts";
import type { DeadLetters } from "../state/dead-letters.ts";
import type { StateStore } from "../state/state-store.ts";
import type { Clock } from "../time/clock.ts";
import type { BotContexts } from "./bot-contexts.ts";
import type { Composer } from "./composer.ts";
import type { BotContext } from "./context.ts";
import type { ConversationQueue } from "./conversation-queue.ts";
import type { CommandNames } from "./dialogs/dialog-runs.ts";
import type { Dialogs } from "./dialogs/dialogs.ts";
import type { HandlerFailures } from "./handler-failures.ts";
import type { DispatchMetrics } from "./incoming.ts";
import type { LedgerCommitOptions } from "./ledger-commits.ts";

/** What a bot's pipeline is built from (by the bot's composition root, daemon/wire-bot.ts). */
export interface DispatcherParts {
  /** The middleware and handlers the bot's `setup` declared. */
  composer: Composer<BotContext<unknown>>;
  /** What contexts are built from, and the bot's identity once registered. */
  contexts: BotContexts;
  /** Orders the events per conversation, within the concurrency and the handler timeout. */
  queue: ConversationQueue;
  /** Runs a failed handler again, then keeps it as a dead letter. */
  failures: HandlerFailures;
  /** Where the delivery ledger lives (`<bot>/runtime`), and how its records are made durable. */
  ledgerStore: StateStore;
  ledgerCommits: LedgerCommitOptions;
  /** Updates the bot's caches from each event before its handlers run. */
  services: BotServices;
  /** Run the handlers for the bot's own messages too (config `own_messages`). */
  ownMessages: boolean;
  clock: Clock;
  log: Logger;
  metrics: DispatchMetrics | undefined;
  /** Where a replayed dead letter is removed from once handled. */
  letters: DeadLetters | undefined;
  /** Where each message event's sends are recorded, so a re-run repeats none. */
  effects: EffectRecords | undefined;
  /** The bot's dialogs (`ctx.prompt`): answers are taken at stage 4, before any handler. */
  dialogs: Dialogs;
  /** The bot's commands, when it has any: some run while a prompt waits (`commands` names them). */
  commands?: (CommandNames & { names(): readonly string[] }) | undefined;
}
