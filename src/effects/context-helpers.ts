/**
 * What the bot's services add to every context (`ctx.snippets`, `ctx.users`, `ctx.groups`,
 * `ctx.typing`, `ctx.report`, and `ctx.send` within the server's limits), the events that keep
 * them fresh, and their stand-ins in a context built without a bot runtime.
 */
import type { SendMessageParams } from "../api/resources/messages.ts";
import { BothostError } from "../errors/bothost-error.ts";
import type { ReportFn } from "./report/message-reporter.ts";
import type { Snippets } from "./snippets/snippet-cache.ts";
import type { TypingHelper } from "./typing/typing-helper.ts";
import type { Users } from "./users/user-cache.ts";
import type { GroupMembership } from "./users/user-groups.ts";

/** The event type each trackable helper keeps itself fresh from. */
export const trackedEventTypes = {
  snippets: "saved_snippets",
  users: "realm_user",
  typing: "typing",
  groups: "user_group",
  /** Not a cache: a prompt's emoji choices are answered by these events. */
  reactions: "reaction",
} as const;

/** A helper whose cache `bot.track()` can keep fresh from events. */
export type TrackedHelper = keyof typeof trackedEventTypes;

/** What the helpers add to every context. */
export interface ContextHelpers {
  snippets: Snippets;
  users: Users;
  /** The organization's user groups (current when the queue receives `user_group` events). */
  groups: GroupMembership;
  typing: TypingHelper;
  report: ReportFn;
  send(params: SendMessageParams): Promise<{ id: number }>;
}

/**
 * The helpers of a context built without a bot runtime: every helper throws a clear error,
 * `send` is passed through unchecked.
 */
export function unavailableHelpers(send: ContextHelpers["send"]): ContextHelpers {
  const fail = (what: string) => (): never => {
    throw new BothostError(
      "HELPERS_UNAVAILABLE",
      `${what} needs a bot runtime (the daemon); this context was built without one.`,
    );
  };
  const stub = <T extends object>(name: string) =>
    new Proxy({} as T, {
      // Not a thenable: `await ctx.users` must not call a throwing `then`.
      get: (_t, key) => (key === "then" ? undefined : fail(`ctx.${name}.${String(key)}()`)),
    });
  return {
    snippets: stub<Snippets>("snippets"),
    users: stub<Users>("users"),
    groups: stub<GroupMembership>("groups"),
    typing: stub<TypingHelper>("typing"),
    report: async () => fail("ctx.report()")(),
    send,
  };
}
