/**
 * The testing kit's core: run one bot against a sandbox in this process, post as a user, and
 * await what the bot answers. The bot runs in a real daemon (the same dispatch, helpers and
 * retries as `bothost run`) speaking real HTTP to the sandbox.
 */

import type { BotDefinition } from "../bot/define-bot.ts";
import { loadBotModule } from "../bot/load-module.ts";
import type { Sandbox, SendAsInput } from "../sandbox/types.ts";
import { type InProcessDaemon, startInProcessDaemon } from "./in-process-daemon.ts";

/** A message as the sandbox stores it (raw Markdown content). */
export interface TestMessage {
  id: number;
  sender_id: number;
  content: string;
  type: "stream" | "private";
  subject: string;
  [field: string]: unknown;
}

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
}

/** A bot running against a sandbox (see {@link runBot}). */
export interface TestBot {
  readonly name: string;
  readonly email: string;
  readonly userId: number;
  /** Post as `from` (an email of the sandbox); resolves the new message's id. */
  post(from: string, input: SendAsInput): number;
  /** The bot's first message after message `after` (default: any), within `timeoutMs` (default 5 s). */
  nextReply(options?: { after?: number; timeoutMs?: number }): Promise<TestMessage>;
  /** Post as `from`, then await the bot's first message after it. */
  ask(from: string, input: SendAsInput, options?: { timeoutMs?: number }): Promise<TestMessage>;
  /** Every message the bot has sent, oldest first. */
  replies(): TestMessage[];
  /** Every log line the bot's daemon wrote, as JSON objects. */
  logs(): Record<string, unknown>[];
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
  const running: InProcessDaemon = await startInProcessDaemon(sandbox, {
    [name]: {
      email,
      definition,
      ...(options.settings !== undefined ? { settings: options.settings } : {}),
      ...(options.config ? { extra: options.config } : {}),
    },
  });
  const failed = [...running.report.authFailed, ...running.report.failed.map((f) => f.name)];
  if (failed.length > 0) {
    const why = running.report.failed[0]?.error;
    await running.stop();
    throw new Error(
      `the bot did not start: ${why instanceof Error ? why.message : "its credentials were rejected"}`,
    );
  }
  const mine = () => control.messages().filter((m) => m.sender_id === userId) as TestMessage[];
  const nextReply = async ({ after = 0, timeoutMs = 5_000 } = {}) => {
    try {
      return await control.waitFor(() => mine().find((m) => m.id > after), { timeoutMs });
    } catch {
      throw new Error(`${name} sent no message after message ${after} within ${timeoutMs} ms`);
    }
  };
  return {
    name,
    email,
    userId,
    post: (from, input) => control.sendAs(from, input).id,
    nextReply,
    ask: (from, input, o = {}) => nextReply({ ...o, after: control.sendAs(from, input).id }),
    replies: mine,
    logs: () => running.logs,
    stop: () => running.stop(),
  };
}
