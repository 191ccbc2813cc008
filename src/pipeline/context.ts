/**
 * The context every handler receives: the event, who the bot is, its client, state, logger,
 * settings and server limits, and ways to answer. What every context has is in lazy-context.ts,
 * what an event's adds in event-context.ts.
 */
export type {
  BaseContext,
  BotContext,
  ContextDeps,
  JobContext,
  SendEffects,
  SignalSource,
  WebhookContext,
} from "./context-types.ts";
export { createContext, progressesOf } from "./event-context.ts";
export { LazyBaseContext } from "./lazy-context.ts";
