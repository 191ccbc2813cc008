/**
 * bothost/testing: what a bot's own tests import. Start the in-memory sandbox server, run a bot
 * against it in this process, post as a user and await the bot's reply; faults are injected
 * through `sandbox.control` (`failNext`, `delay`, `resetConnections`, `rateLimitNext`,
 * `hangNextPoll`, `expireQueue`, `restartQueues`). A vitest fixture is in `bothost/testing/vitest`.
 *
 * @example
 * ```ts
 * import { runBot, startSandbox } from "bothost/testing";
 * const sandbox = await startSandbox();
 * const bot = await runBot(sandbox, { bot: "./bots/echo.ts" });
 * const reply = await bot.ask("member@sandbox.example", { type: "direct", to: [bot.email], content: "hi" });
 * ```
 */

export type { DialogView } from "./pipeline/dialogs/dialog-entry.ts";
export { SandboxControlError } from "./sandbox/control.ts";
export { SandboxOrgError } from "./sandbox/org/load-org.ts";
export type {
  FailOptions,
  NewSandboxUser,
  OrgInput,
  QueueInfo,
  Sandbox,
  SandboxControl,
  SandboxOptions,
  SandboxOutgoingWebhook,
  SandboxUser,
  SendAsInput,
} from "./sandbox/types.ts";
export type { WebhookRequest, WebhookResponse } from "./testing/inbound-webhook.ts";
export type { OutgoingWebhookOptions } from "./testing/outgoing-webhook.ts";
export type { ProgressView } from "./testing/progress-view.ts";
export {
  DEFAULT_WAIT_MS,
  type NextReplyOptions,
  type ReactAs,
  type RunBotOptions,
  runBot,
  type TestBot,
} from "./testing/run-bot.ts";
export { TestClock, type TestClockOptions } from "./testing/test-clock.ts";
export type {
  TestChannelMessage,
  TestDirectMessage,
  TestMessage,
  TestReaction,
  TestRecipient,
} from "./testing/test-message.ts";
export { startSandbox } from "./testing/test-sandbox.ts";
