/**
 * The testing kit's core: run one bot against a sandbox in this process, post as a user, and
 * await what the bot answers. The bot runs in a real daemon (the same dispatch, helpers and
 * retries as `bothost run`) speaking real HTTP to the sandbox.
 */

import type { BotDefinition } from "../bot/define-bot.ts";
import { loadBotModule } from "../bot/load-module.ts";
import { botNameProblem } from "../config/schema-fields.ts";
import { failureWords } from "../daemon/status-of.ts";
import { BothostError } from "../errors/bothost-error.ts";
import type { DialogView } from "../pipeline/dialogs/dialog-entry.ts";
import type { Sandbox, SendAsInput } from "../sandbox/types.ts";
import { AskClaims, sameConversation } from "./ask-claims.ts";
import { deliverScheduled, jobsDone, nextDelivery } from "./deliver-scheduled.ts";
import { finalLetter } from "./final-failure.ts";
import { type InProcessDaemon, startInProcessDaemon } from "./in-process-daemon.ts";
import { checkRunBotArguments, givenBot } from "./kit-arguments.ts";
import { checkOutgoingOptions, type OutgoingWebhookOptions, outgoingMode } from "./outgoing-webhook.ts";
import { type ProgressView, progressView } from "./progress-view.ts";
import { reactAs } from "./react-as.ts";
import { newStateFolder, wipe } from "./state-folders.ts";
import type { TestClock } from "./test-clock.ts";
import type { TestMessage } from "./test-message.ts";
import { describeMessage, handlerFailure } from "./wait-messages.ts";

/** How long `ask`, `nextReply` and `handled` wait by default: well inside vitest's 5 s test timeout. */
export const DEFAULT_WAIT_MS = 3_000;

export interface RunBotOptions {
  /** The bot: what `defineBot` returned, or a module path (from the working directory). */
  // biome-ignore lint/suspicious/noExplicitAny: any bot definition, whatever its settings schema
  bot: BotDefinition<any, any> | string;
  /** Its name in the config. Default `bot`. */
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
   * question's button began, `asked` is that question: the press taken, its run over.
   */
  progress(asked: number, options?: { timeoutMs?: number; movedNote?: string }): Promise<ProgressView>;
  /** Every message the bot has sent, oldest first. */
  replies(): TestMessage[];
  /** The bot's open dialogs, oldest first, as `bothost dialogs` lists them (none while stopped). */
  dialogs(): DialogView[];
  /** Every log line the bot's daemon wrote, as JSON objects. */
  logs(): Record<string, unknown>[];
  /**
   * Stop the bot and start it again on the same state, as a deploy or a crash would: dialogs,
   * dead letters, bookings and `ctx.state` carry over, and messages posted meanwhile are caught
   * up. `crash: true` cuts off the handlers still running (nothing they staged is kept, their
   * messages are handled again); else they may finish, as on SIGTERM. `bot`: start this
   * definition instead (a new version of the bot), from now on.
   */
  restart(options?: {
    crash?: boolean;
    // biome-ignore lint/suspicious/noExplicitAny: any bot definition, whatever its settings schema
    bot?: BotDefinition<any, any>;
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
   * down are caught up, as the daemon does at a start. Rejects when it runs, or was wiped.
   */
  start(): Promise<void>;
}

/**
 * @example
 * ```ts
 * const sandbox = await startSandbox();
 * const bot = await runBot(sandbox, { bot: echo, settings: { prefix: "echo: " } });
 * const reply = await bot.ask("member@sandbox.example", { type: "direct", to: [bot.email], content: "hi" });
 * expect(reply.content).toBe("echo: hi");
 * await bot.stop({ wipe: true });
 * ```
 */
export async function runBot(sandbox: Sandbox, options: RunBotOptions): Promise<TestBot> {
  checkRunBotArguments(sandbox, options);
  const name = options.name ?? "bot";
  const badName = botNameProblem(name);
  if (badName) throw new Error(`runBot: name ${badName}`);
  checkOutgoingOptions(options.outgoingWebhook, options.config);
  const email = options.email ?? `${name}-bot@sandbox.example`;
  const definition =
    typeof options.bot === "string"
      ? (
          await loadBotModule(options.bot, {
            configDir: process.cwd(),
            configDirIs: "the current directory",
            botName: name,
          })
        ).definition
      : givenBot(options.bot, "runBot");
  const control = sandbox.control;
  if (!control.users().some((u) => u.email === email)) {
    const owner = control.users().find((u) => u.role === 100 && !u.is_bot)?.email;
    control.createUser({
      email,
      full_name: name,
      bot: options.outgoingWebhook ? "outgoing" : "generic",
      ...(owner ? { owner } : {}),
      channels: options.channels ?? ["general"],
    });
  }
  const userId = control.users().find((u) => u.email === email)!.user_id;
  if (options.clock && Math.abs(options.clock.now() - control.now()) > 1_000) {
    throw new Error(
      "runBot: the clock is not the sandbox's; start the sandbox with startSandbox({ clock }) too",
    );
  }
  const { outgoingWebhook: outgoing } = options;
  const webhook = outgoing
    ? outgoingMode(control, name, email, outgoing === true ? {} : outgoing)
    : undefined;
  // Kept across stops and restarts, removed by stop({ wipe: true }) (or at the process's exit).
  const stateDir = await newStateFolder();
  let wiped = false;
  const logs: Record<string, unknown>[] = [];
  const launch = async (bot: BotDefinition<never, never>): Promise<InProcessDaemon> => {
    const started = await startInProcessDaemon(
      sandbox,
      {
        [name]: {
          email,
          definition: bot,
          ...(options.settings !== undefined ? { settings: options.settings } : {}),
          ...(options.config?.trim() ? { extra: options.config.trim() } : {}),
          ...(webhook ? { generated: webhook.entry } : {}),
        },
      },
      {
        stateDir,
        logs,
        ...(options.clock ? { clock: options.clock } : {}),
        ...(webhook ? { global: webhook.global, env: webhook.env } : {}),
      },
    );
    const { authFailed, failed } = started.report;
    if (authFailed.length + failed.length > 0) {
      await started.stop();
      wiped = true;
      await wipe(stateDir);
      const why = failed[0]?.error;
      // What the setup threw and where in the test's own code, as `bothost check` says it.
      const message = `the bot did not start: ${failed[0] ? failureWords(why) : "its credentials were rejected"}`;
      const cause = failed[0] ? { cause: why } : undefined;
      // The setup's code kept (BOT_SETUP_INVALID, …), so that a test can tell why by it.
      throw why instanceof BothostError
        ? new BothostError(why.code, message, cause)
        : new Error(message, cause);
    }
    webhook?.point(started);
    return started;
  };
  // The version running: restart({ bot }) replaces it for later starts too.
  let current = definition as BotDefinition<never, never>;
  // The daemon running now (undefined while stopped) and the last one started (its ledger view).
  let running: InProcessDaemon | undefined = await launch(current);
  let last = running;
  const scheduler = () => running?.daemon.bots.find((b) => b.name === name)?.scheduler;
  const deliver = options.clock?.onAdvance(
    deliverScheduled(control, userId, scheduler, DEFAULT_WAIT_MS),
    () => nextDelivery(control),
  );
  const jobs = options.clock?.afterEachTimer(jobsDone(scheduler, DEFAULT_WAIT_MS));
  const view = (id: number) => control.messageView(id);
  const mine = () =>
    control
      .messages()
      .filter((m) => m.sender_id === userId)
      .map((m) => view(m.id as number)!);
  const firstAfter = (after: number, where: ((m: TestMessage) => boolean) | undefined) => {
    for (const m of control.messages()) {
      if (m.sender_id !== userId || (m.id as number) <= after) continue;
      const message = view(m.id as number)!;
      if (where === undefined || where(message)) return message;
    }
    return undefined;
  };
  const silence = (after: number, timeoutMs: number, why = "") => {
    const what = after > 0 ? ` after ${describeMessage(control, after)}` : "";
    const state =
      why ||
      (after > 0 && last.ledger.recorded(name, after) ? " (it handled that message without answering)" : "");
    return new Error(`${name} sent no message${what} within ${timeoutMs} ms${state}`);
  };
  const nextReply = async ({ after = 0, timeoutMs = DEFAULT_WAIT_MS, where }: NextReplyOptions = {}) => {
    try {
      return await control.waitFor(() => firstAfter(after, where), { timeoutMs });
    } catch {
      throw silence(after, timeoutMs);
    }
  };
  const claims = new AskClaims();
  const ask = async (from: string, input: SendAsInput, { timeoutMs = DEFAULT_WAIT_MS } = {}) => {
    const claim = claims.open(view(control.sendAs(from, input).id)!);
    const sent = () => {
      const floor = claims.floor();
      return control
        .messages()
        .filter((m) => m.sender_id === userId && (m.id as number) > floor)
        .map((m) => view(m.id as number)!);
    };
    try {
      return await control.waitFor(() => claims.take(claim, sent()), { timeoutMs });
    } catch {
      const taken = claims.giveUp(claim, sent());
      const why =
        taken.length > 0 ? ` (its messages there after it, ${taken.join(", ")}, answered earlier asks)` : "";
      throw silence(claim.asked.id, timeoutMs, why);
    }
  };
  /** Waits as {@link TestBot.handled} does; why its handler failed, when it was kept as a dead letter. */
  const settled = async (messageId: number, { timeoutMs = DEFAULT_WAIT_MS } = {}) => {
    const daemon = running;
    if (!daemon) throw new Error(`${name} is stopped: start() it before waiting for a message to be handled`);
    const record = control.messages().find((m) => m.id === messageId);
    if (!record) throw new Error(`handled: the sandbox has no message ${messageId}`);
    const what = describeMessage(control, messageId);
    const notSent = webhook?.notSent(messageId);
    if (webhook ? notSent : (record.flags as Record<string, unknown>)[String(userId)] === undefined) {
      const why = notSent ?? "it is not in that direct message or channel";
      throw new Error(`${what} never reached ${name}: ${why}`);
    }
    const runtime = daemon.daemon.bots.find((b) => b.name === name);
    if (runtime && !runtime.receives("message"))
      throw new Error(`${what} never reached ${name}: its queue takes no message events (it handles none)`);
    // An answer to a prompt is marked handled once recorded: the dialog's run on it comes after.
    // The bot's own question: a press on its button answers it, recorded under the question.
    const question = record.sender_id === userId;
    const after = (signal: AbortSignal) =>
      runtime?.answerRunsOver(messageId, signal, question) ?? Promise.resolve(true);
    await daemon.ledger.until(
      name,
      messageId,
      timeoutMs,
      () => {
        const failure = handlerFailure(daemon.logs, messageId);
        const why = failure ? `: its handler failed (${failure}) and runs again after a pause` : "";
        return new Error(`${name} did not finish handling ${what} within ${timeoutMs} ms${why}`);
      },
      after,
    );
    const letter = await finalLetter(daemon, name, messageId, timeoutMs, () => {
      const why = running === daemon ? "" : `: ${name} is stopped, and replays it at its next start`;
      return new Error(`${name} did not finish replaying ${what} within ${timeoutMs} ms${why}`);
    });
    return letter
      ? `${name}'s handler failed on ${what} (${letter.attempts} attempt(s), kept as dead letter ${letter.id}): ${letter.error.message}`
      : undefined;
  };
  const handled = async (messageId: number, options?: { timeoutMs?: number }) => {
    const failed = await settled(messageId, options);
    if (failed !== undefined) throw new Error(failed);
  };
  const stop = async ({ crash = false, wipe: wipeState = false } = {}) => {
    const daemon = running;
    running = undefined;
    // On a held clock no stop deadline would pass: a handler still running would hold the stop.
    // A wipe deletes whatever a handler still running would record: no need to wait for it.
    const cut = crash || wipeState || options.clock?.held === true;
    await daemon?.stop({ ...(cut ? { deadlineMs: 0 } : {}), keepState: true });
    if (wipeState && !wiped) {
      wiped = true;
      deliver?.();
      jobs?.();
      await wipe(stateDir);
    }
  };
  const start = async () => {
    if (wiped) throw new Error(`${name} cannot start: stop({ wipe: true }) deleted its state`);
    if (running) throw new Error(`${name} is running: stop() it before start()`);
    running = await launch(current);
    last = running;
  };
  return {
    name,
    email,
    userId,
    post: (from, input) => control.sendAs(from, input).id,
    nextReply,
    ask,
    handled,
    react: (message, emoji, { as, remove = false }) =>
      reactAs(sandbox, as, typeof message === "number" ? message : message.id, emoji, remove),
    progress: async (asked, { movedNote, ...o } = {}) => {
      const failed = await settled(asked, o);
      const question = view(asked)!;
      const answers = mine().filter((m) => m.id > asked && sameConversation(m, question));
      return progressView(control, answers, movedNote, failed);
    },
    replies: mine,
    dialogs: () => running?.daemon.bots.find((b) => b.name === name)?.dialogs() ?? [],
    logs: () => logs,
    restart: async ({ crash = false, bot } = {}) => {
      // Checked first: a value that is no bot leaves the bot running as it was.
      const next = bot ? givenBot(bot, "restart") : current;
      await stop({ crash });
      current = next;
      await start();
    },
    stop,
    start,
  };
}
