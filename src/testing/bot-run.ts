/**
 * What the testing kit's members read of one bot runBot started: its account, the messages it
 * sent there, the daemon running it now (none while stopped), and what it logged.
 */
import type { SandboxControl } from "../sandbox/types.ts";
import type { AccountTurns } from "./account-turns.ts";
import type { InProcessDaemon } from "./in-process-daemon.ts";
import type { OutgoingMode } from "./outgoing-webhook.ts";
import type { TestMessage } from "./test-message.ts";
import { notReached } from "./wait-messages.ts";

export interface BotRun {
  readonly name: string;
  readonly email: string;
  readonly userId: number;
  readonly control: SandboxControl;
  /** The account's messages since this bot took it. */
  readonly turns: AccountTurns;
  /** Its log lines, across stops and starts. */
  readonly logs: Record<string, unknown>[];
  /** Run as an outgoing-webhook bot: what the server delivered to it. */
  readonly webhook: OutgoingMode | undefined;
  /** Whether it runs on a test clock. */
  readonly testClock: boolean;
  /** How many requests the sandbox had answered before the bot started. */
  readonly requestsBefore: number;
  /** The daemon running it now; undefined while stopped. */
  running(): InProcessDaemon | undefined;
  /** The daemon started last (its ledger view stays readable while stopped). */
  last(): InProcessDaemon;
}

/** The bot's runtime in the daemon running now. */
export const runtimeOf = (run: BotRun) => run.running()?.daemon.bots.find((b) => b.name === run.name);

/** Message `id` as the sandbox shows it now, if it has it. */
export const viewOf = (run: BotRun, id: number): TestMessage | undefined => run.control.messageView(id);

/** The bot's messages in its account, oldest first. */
export const sentBy = (run: BotRun): TestMessage[] =>
  run.turns.sent().map((m) => viewOf(run, m.id as number)!);

/** Why message `id` never reached the bot, if it did not. */
export const unreached = (run: BotRun, id: number) => notReached(run.control, run.userId, id, run.webhook);
