/**
 * The testing kit's core: run one bot against a sandbox in this process, post as a user, and
 * await what the bot answers. The bot runs in a real daemon (the same dispatch, helpers and
 * retries as `bothost run`) speaking real HTTP to the sandbox.
 */

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BotDefinition } from "../bot/define-bot.ts";
import { loadBotModule } from "../bot/load-module.ts";
import type { Sandbox, SendAsInput } from "../sandbox/types.ts";
import { type InProcessDaemon, startInProcessDaemon } from "./in-process-daemon.ts";
import { type ProgressView, progressView } from "./progress-view.ts";
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
}

/** A bot running against a sandbox (see {@link runBot}). */
export interface TestBot {
  readonly name: string;
  readonly email: string;
  readonly userId: number;
  /** Post as `from` (an email of the sandbox); returns the new message's id. */
  post(from: string, input: SendAsInput): number;
  /**
   * The bot's first message after message `after` (default: any), within `timeoutMs` (default
   * {@link DEFAULT_WAIT_MS}); rejects with a message naming what was posted when none comes.
   */
  nextReply(options?: { after?: number; timeoutMs?: number }): Promise<TestMessage>;
  /**
   * Post as `from`, then await the bot's first message after it in the same conversation (the
   * same channel and topic, or the same direct-message group).
   */
  ask(from: string, input: SendAsInput, options?: { timeoutMs?: number }): Promise<TestMessage>;
  /**
   * Resolves once the bot has handled message `messageId` (its handlers finished and the message
   * is recorded as handled), for bots that count or react without answering. Rejects when the
   * message did not reach the bot, when its handler failed every attempt (the error's message is
   * in the rejection), or after `timeoutMs` (default {@link DEFAULT_WAIT_MS}).
   */
  handled(messageId: number, options?: { timeoutMs?: number }): Promise<void>;
  /**
   * Once the bot handled message `asked` (as {@link TestBot.handled}): what a `ctx.progress`
   * answering it shows: the bot's messages after it in its conversation, their final text, and
   * the edits made to them. `movedNote`: the progress's `movedNote` option, if set.
   */
  progress(asked: number, options?: { timeoutMs?: number; movedNote?: string }): Promise<ProgressView>;
  /** Every message the bot has sent, oldest first. */
  replies(): TestMessage[];
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
  /** Stop the bot (its queue is deleted). */
  stop(): Promise<void>;
}

/**
 * @example
 * ```ts
 * const sandbox = await startSandbox();
 * const bot = await runBot(sandbox, { bot: echo, settings: { prefix: "echo: " } });
 * const reply = await bot.ask("member@sandbox.example", { type: "direct", to: [bot.email], content: "hi" });
 * expect(reply.content).toBe("echo: hi");
 * await bot.stop();
 * ```
 */
export async function runBot(sandbox: Sandbox, options: RunBotOptions): Promise<TestBot> {
  const name = options.name ?? "bot";
  const email = options.email ?? `${name}-bot@sandbox.example`;
  const definition =
    typeof options.bot === "string"
      ? (await loadBotModule(options.bot, { configDir: process.cwd(), botName: name })).definition
      : options.bot;
  const control = sandbox.control;
  if (!control.users().some((u) => u.email === email)) {
    const owner = control.users().find((u) => u.role === 100 && !u.is_bot)?.email;
    control.createUser({
      email,
      full_name: name,
      bot: "generic",
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
  // Kept across restarts, removed at stop.
  const stateDir = await mkdtemp(join(tmpdir(), "bothost-testbot-"));
  const logs: Record<string, unknown>[] = [];
  const start = async (bot: BotDefinition<never, never>): Promise<InProcessDaemon> => {
    const started = await startInProcessDaemon(
      sandbox,
      {
        [name]: {
          email,
          definition: bot,
          ...(options.settings !== undefined ? { settings: options.settings } : {}),
          ...(options.config ? { extra: options.config } : {}),
        },
      },
      { stateDir, logs, ...(options.clock ? { clock: options.clock } : {}) },
    );
    const failed = [...started.report.authFailed, ...started.report.failed.map((f) => f.name)];
    if (failed.length > 0) {
      const why = started.report.failed[0]?.error;
      await started.stop();
      await rm(stateDir, { recursive: true, force: true });
      throw new Error(
        `the bot did not start: ${why instanceof Error ? why.message : "its credentials were rejected"}`,
      );
    }
    return started;
  };
  // The version running: restart({ bot }) replaces it for later restarts too.
  let current = definition as BotDefinition<never, never>;
  let running = await start(current);
  const deliver = options.clock?.onAdvance(() => control.advanceClock(0));
  const view = (id: number) => control.messageView(id) as TestMessage | undefined;
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
  const nextReply = async ({
    after = 0,
    timeoutMs = DEFAULT_WAIT_MS,
    where,
  }: {
    after?: number;
    timeoutMs?: number;
    where?: (m: TestMessage) => boolean;
  } = {}) => {
    try {
      return await control.waitFor(() => firstAfter(after, where), { timeoutMs });
    } catch {
      const what = after > 0 ? ` after ${describeMessage(control, after)}` : "";
      const state =
        after > 0 && running.ledger.recorded(name, after)
          ? " (it handled that message without answering)"
          : "";
      throw new Error(`${name} sent no message${what} within ${timeoutMs} ms${state}`);
    }
  };
  const handled = async (messageId: number, { timeoutMs = DEFAULT_WAIT_MS } = {}) => {
    const record = control.messages().find((m) => m.id === messageId);
    if (!record) throw new Error(`handled: the sandbox has no message ${messageId}`);
    const what = describeMessage(control, messageId);
    if ((record.flags as Record<string, unknown>)[String(userId)] === undefined) {
      throw new Error(`${what} never reached ${name}: it is not in that direct message or channel`);
    }
    await running.ledger.until(name, messageId, timeoutMs, () => {
      const failure = handlerFailure(running.logs, messageId);
      const why = failure ? `: its handler failed (${failure}) and runs again after a pause` : "";
      return new Error(`${name} did not finish handling ${what} within ${timeoutMs} ms${why}`);
    });
    const letter = (await running.daemon.letters.list(name)).find(
      (l) => (l.event as { message?: { id?: number } }).message?.id === messageId,
    );
    if (letter) {
      throw new Error(
        `${name}'s handler failed on ${what} (${letter.attempts} attempt(s), kept as dead letter ${letter.id}): ${letter.error.message}`,
      );
    }
  };
  return {
    name,
    email,
    userId,
    post: (from, input) => control.sendAs(from, input).id,
    nextReply,
    ask: (from, input, o = {}) => {
      const after = control.sendAs(from, input).id;
      const asked = view(after)!;
      return nextReply({ ...o, after, where: (m) => sameConversation(m, asked) });
    },
    handled,
    progress: async (asked, { movedNote, ...o } = {}) => {
      await handled(asked, o);
      const question = view(asked)!;
      const answers = mine().filter((m) => m.id > asked && sameConversation(m, question));
      return progressView(control, answers, movedNote);
    },
    replies: mine,
    logs: () => logs,
    restart: async ({ crash = false, bot } = {}) => {
      await running.stop({ ...(crash ? { deadlineMs: 0 } : {}), keepState: true });
      if (bot) current = bot as BotDefinition<never, never>;
      running = await start(current);
    },
    stop: async () => {
      deliver?.();
      await running.stop();
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}

/** Whether two messages are in one conversation: a channel's topic, or one direct-message group. */
function sameConversation(a: TestMessage, b: TestMessage): boolean {
  if (a.type === "stream" || b.type === "stream") {
    return (
      a.type === "stream" &&
      b.type === "stream" &&
      a.stream_id === b.stream_id &&
      a.subject.toLowerCase() === b.subject.toLowerCase()
    );
  }
  const people = (m: TestMessage) =>
    (m.display_recipient as { id: number }[])
      .map((r) => r.id)
      .sort((x, y) => x - y)
      .join(",");
  return people(a) === people(b);
}
