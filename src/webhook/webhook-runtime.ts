/** What the HTTP side needs of a bot runtime. */
import type { ServerInfo } from "../api/server-info.ts";
import type { ContextDeps, WebhookContext } from "../pipeline/context.ts";
import type { RunHandler } from "../pipeline/incoming.ts";
import type { ServerEvent } from "../wire/events.ts";
import type { WebhookOptions } from "./webhook-options.ts";

/** A `bot.webhook(name, options, handler)` declaration. */
export interface WebhookDeclaration<S = unknown> {
  options: WebhookOptions;
  handler: (ctx: WebhookContext<S>) => unknown;
}

export interface WebhookRuntime {
  readonly name: string;
  readonly status: { readonly state: string; readonly server: ServerInfo | undefined };
  /** Hand an event to the bot's dispatch pipeline; true once its handlers finished. */
  deliver(
    event: ServerEvent,
    options?: { reply?: (content: string) => Promise<{ id: number }> },
  ): Promise<boolean>;
  contextDeps(): ContextDeps<unknown>;
  /** The pipeline's run stage, where an inbound webhook's handler runs. */
  readonly runHandler: RunHandler;
  readonly declarations: { readonly webhooks: ReadonlyMap<string, WebhookDeclaration> };
}
