/**
 * What a test gets from `runBot`: the options it takes and the running bot's members (see
 * run-bot.ts for how they work).
 */
import type { BotDefinition } from "../bot/define-bot.ts";
import type { DialogView } from "../pipeline/dialogs/dialog-entry.ts";
import type { SendAsInput } from "../sandbox/types.ts";
import type { WebhookRequest, WebhookResponse } from "./inbound-webhook.ts";
import type { OutgoingWebhookOptions } from "./outgoing-webhook.ts";
import type { ProgressView } from "./progress-view.ts";
import type { TestClock } from "./test-clock.ts";
import type { TestMessage } from "./test-message.ts";

/** How long `ask`, `nextReply` and `handled` wait by default: well inside vitest's 5 s test timeout. */
export const DEFAULT_WAIT_MS = 3_000;

export interface RunBotOptions {
  /** The bot: what `defineBot` returned, or a module path (from the working directory). */
  // biome-ignore lint/suspicious/noExplicitAny: any bot definition, whatever its settings schema
  bot: BotDefinition<any, any> | string;
  /** Its name in the config. Default `bot`. Refused while a bot by that name runs on the sandbox. */
  name?: string;
  /** Its account; created when the sandbox has none (a generic bot in `channels`). Default `<name>-bot@sandbox.example`. */
  email?: string;
  /** Channels a created account joins. Default `["general"]`. */
  channels?: string[];
  /** The bot's `settings`, validated by its schema as the config loader does. */
  settings?: unknown;
  /** More of the bot's config entry, as YAML lines: `"retries: { attempts: 1 }"`. */
  config?: string;
  /**
   * Keys of the daemon's config (its top level), as YAML lines: `"shutdown_timeout: 500ms"`.
   * Checked as `bothost run` checks them; `server`, `state`, `bots`, `http`, `log` and `leases`
   * are the kit's own.
   */
  daemon?: string;
  /**
   * The clock of the bot's schedulers, shared with the sandbox: start the sandbox with
   * `startSandbox({ clock })` too; `clock.advance(ms)` then delivers what the sandbox has due.
   */
  clock?: TestClock;
  /**
   * Run it as an outgoing-webhook bot (config `outgoing_webhook`), not on an event queue: the
   * sandbox POSTs each direct message to it and each channel message that mentions it to the
   * bot's listener, as the server does, and posts the reply in the HTTP answer as the bot. The
   * account is created as an outgoing-webhook bot (an org's must be one). `true`, or options.
   */
  outgoingWebhook?: boolean | OutgoingWebhookOptions;
  /** Serve the bot's inbound webhooks (`bot.webhook`) on a listener of its own, for {@link TestBot.webhook}. */
  webhooks?: boolean;
}

/** What {@link TestBot.nextReply} waits for. */
export interface NextReplyOptions {
  /** Only a message with an id above this one (default: any). */
  after?: number;
  /** How long to wait, in ms (default {@link DEFAULT_WAIT_MS}). */
  timeoutMs?: number;
  /** Only a message this returns true for, e.g. `(m) => m.type === "stream"`. */
  where?: (message: TestMessage) => boolean;
}

/** Who reacts in {@link TestBot.react}, and whether the reaction is taken off. */
export interface ReactAs {
  /** The person reacting: an email of the sandbox. */
  as: string;
  /** Take the reaction off instead. */
  remove?: boolean;
}

/** A bot running against a sandbox (see {@link runBot}). */
export interface TestBot {
  readonly name: string;
  readonly email: string;
  readonly userId: number;
  /** Post as `from` (an email of the sandbox); returns the new message's id. */
  post(from: string, input: SendAsInput): number;
  /**
   * The bot's first message after message `after` (default: any) that `where` accepts, within
   * `timeoutMs` (default {@link DEFAULT_WAIT_MS}); rejects with a message naming what was posted
   * when none comes.
   */
  nextReply(options?: NextReplyOptions): Promise<TestMessage>;
  /**
   * Post as `from`, then await the bot's first message after it in the same conversation (the
   * same channel and topic, or the same direct-message group). Asks made at once in one
   * conversation take the bot's messages there in the order they were asked: each the first one
   * above its own message that no earlier ask took.
   */
  ask(from: string, input: SendAsInput, options?: { timeoutMs?: number }): Promise<TestMessage>;
  /**
   * Resolves once the bot has handled message `messageId` (its handlers finished and the message
   * is recorded as handled; for an answer to a `ctx.prompt`, the dialog's run on it is over too;
   * for the bot's question, its answer taken, a press included, and that run over), for bots
   * that count or react without answering. Rejects when the
   * message did not reach the bot, when its handler failed every attempt (the error's message is
   * in the rejection), after `timeoutMs` (default {@link DEFAULT_WAIT_MS}), or at once when the
   * bot is stopped.
   */
  handled(messageId: number, options?: { timeoutMs?: number }): Promise<void>;
  /**
   * React to a message (its id, or a message the kit returned) with an emoji name as the person
   * `as` (an email of the sandbox), through the server's own route, so the bot receives the
   * `reaction` event as from a person; `remove: true` takes the reaction off. Resolves once the
   * server accepted it; rejects with the server's error (an unknown emoji, a message that person
   * cannot see, a reaction already there or not there).
   */
  react(message: number | TestMessage, emoji: string, options: ReactAs): Promise<void>;

  /**
   * Once the bot handled message `asked` (as {@link TestBot.handled}), or kept it as a dead letter
   * (then `failed` says why, and the progress ended as failed): what a `ctx.progress` answering it
   * shows: the bot's messages after it in its conversation, their final text, and the edits made
   * to them. `movedNote`: the progress's `movedNote` option, if set. For a progress a press on a
   * question's button began, `asked` is the message pressed (the question, or the refusal that asked
   * it again): the press taken, its run over.
   */
  progress(asked: number, options?: { timeoutMs?: number; movedNote?: string }): Promise<ProgressView>;
  /**
   * Send a request to the bot's inbound webhook `name` (`bot.webhook(name, …)`) as a sender
   * would: `POST /webhooks/<bot>/<name>` on its listener (`runBot({ webhooks: true })`), `body`
   * as JSON (a string as it is, declared JSON when it is JSON text). Resolves what the listener
   * answered; the handler runs after.
   */
  webhook(name: string, request?: WebhookRequest): Promise<WebhookResponse>;
  /**
   * Every message the bot has sent, oldest first: its account's messages from its start (each
   * `start()` too) until another bot starts on the account, and the scheduled messages it made.
   */
  replies(): TestMessage[];
  /** The bot's open dialogs, oldest first, as `bothost dialogs` lists them (while stopped, those its state keeps). */
  dialogs(): DialogView[];
  /** Every log line the bot's daemon wrote, as JSON objects. */
  logs(): Record<string, unknown>[];
  /**
   * Stop the bot and start it again on the same state, as a deploy or a crash would: dialogs,
   * dead letters, bookings and `ctx.state` carry over, and messages posted meanwhile are caught
   * up. `crash: true` cuts off the handlers still running (nothing they staged is kept, their
   * messages are handled again); else they may finish, as on SIGTERM. `bot`: start this
   * definition instead (a new version of the bot), from now on; or its module's path, as
   * `runBot` takes it (from the current directory).
   */
  restart(options?: {
    crash?: boolean;
    // biome-ignore lint/suspicious/noExplicitAny: any bot definition, whatever its settings schema
    bot?: BotDefinition<any, any> | string;
  }): Promise<void>;
  /**
   * Stop the bot (its queue is deleted), keeping its state (dialogs, dead letters, `ctx.state`,
   * the delivery ledger) for {@link TestBot.start}; `crash: true` cuts off the handlers still
   * running, as does a stop on a held clock (no deadline would pass on it). `wipe: true` deletes
   * the state too, and cuts off the handlers still running as `crash` does (what they would record
   * goes with it): the bot cannot start again (the vitest fixture does this after each test).
   * Stopping a stopped bot only wipes, when asked.
   */
  stop(options?: { crash?: boolean; wipe?: boolean }): Promise<void>;
  /**
   * Start a stopped bot again on its state: open dialogs go on, and messages posted while it was
   * down are caught up, as the daemon does at a start. Rejects when it runs, was wiped, or
   * another bot by its name runs on the sandbox now.
   */
  start(): Promise<void>;
}
