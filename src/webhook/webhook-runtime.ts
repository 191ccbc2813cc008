/**
 * What the HTTP side needs of a bot runtime: its name and status, the one dispatch path
 * (`deliver`), what a context is built from, and its `bot.webhook()` declarations.
 */
import type { BotRuntime } from "../daemon/bot-runtime.ts";

export type WebhookRuntime = Pick<BotRuntime, "name" | "status" | "deliver" | "contextDeps" | "declarations">;
