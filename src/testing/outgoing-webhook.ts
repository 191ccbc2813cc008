/**
 * The testing kit's outgoing-webhook mode: the bot's daemon listens on a port of its own, the
 * bot's account (an outgoing-webhook bot) points there, and the sandbox POSTs each message that
 * triggers it, as the server does, then posts the reply of the HTTP answer as the bot.
 */

import { randomBytes } from "node:crypto";
import type { SandboxControl } from "../sandbox/types.ts";
import { sameConversation } from "./ask-claims.ts";
import type { InProcessDaemon } from "./in-process-daemon.ts";
import { LISTENER } from "./inbound-webhook.ts";
import { kitError } from "./kit-arguments.ts";

/** How {@link RunBotOptions.outgoingWebhook} runs the bot. */
export interface OutgoingWebhookOptions {
  /** The format the sandbox POSTs: `zulip` (JSON) or `slack` (a form body). Default: the account's, else `zulip`. */
  interface?: "zulip" | "slack";
  /** The bot's `reply_deadline`, in ms: a reply later than this goes through the API. Default 8,000. */
  replyDeadlineMs?: number;
}

/** What runBot needs of the mode: the daemon's config, and where to point the account once it listens. */
export interface OutgoingMode {
  /** The listener (the daemon's top-level config). */
  readonly global: string;
  /** The bot's `outgoing_webhook` entry. */
  readonly entry: string;
  readonly env: Record<string, string>;
  /** Point the account at the daemon's listener (its port is new at each start). */
  point(daemon: InProcessDaemon): void;
  /** Why message `id` triggers no delivery to the bot, or undefined when it does. */
  notSent(id: number): string | undefined;
  /**
   * The server's `Failure! …` notice, when it is the next message in the conversation after
   * message `id` (its delivery failed: the bot stopped, an error status), said as why.
   */
  failed(id: number): string | undefined;
}

const TOKEN_ENV = "BOTHOST_TEST_OUTGOING_TOKEN";

/**
 * Throws, naming the option, when runBot's `outgoingWebhook` is not what it takes, or when the
 * bot's `config` sets `outgoing_webhook` too (which the option writes).
 */
export function checkOutgoingOptions(value: unknown, config: string | undefined): void {
  if (value === undefined || value === false || value === true) {
    if (value === true && config !== undefined && /^\s*outgoing_webhook\s*:/m.test(config)) {
      throw kitError(
        "runBot: outgoingWebhook writes the bot's outgoing_webhook entry: leave outgoing_webhook out of config (its reply deadline is outgoingWebhook: { replyDeadlineMs })",
      );
    }
    return;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw kitError("runBot: outgoingWebhook is true, false or { interface, replyDeadlineMs }");
  }
  checkOutgoingOptions(true, config);
  const { interface: format, replyDeadlineMs, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) {
    throw kitError(
      `runBot: outgoingWebhook.${unknown[0]} is not an option: it takes interface and replyDeadlineMs`,
    );
  }
  if (format !== undefined && format !== "zulip" && format !== "slack") {
    throw kitError(`runBot: outgoingWebhook.interface is "zulip" or "slack", not ${JSON.stringify(format)}`);
  }
  if (
    replyDeadlineMs !== undefined &&
    !(
      Number.isInteger(replyDeadlineMs) &&
      (replyDeadlineMs as number) > 0 &&
      (replyDeadlineMs as number) <= 10_000
    )
  ) {
    throw kitError(
      `runBot: outgoingWebhook.replyDeadlineMs is a whole number of milliseconds from 1 to 10000 (the server waits 10 s), not ${JSON.stringify(replyDeadlineMs)}`,
    );
  }
}

/**
 * The outgoing-webhook mode of bot `name` on account `email` (created by the caller as an
 * outgoing-webhook bot, or one of the org's outgoing-webhook or embedded bots).
 */
export function outgoingMode(
  control: SandboxControl,
  name: string,
  email: string,
  options: OutgoingWebhookOptions,
): OutgoingMode {
  const account = control.users().find((u) => u.email === email)!;
  if (account.bot_type !== 3 && account.bot_type !== 4) {
    throw kitError(
      `runBot: ${email} is not an outgoing-webhook bot: outgoingWebhook needs one (an org's bot of type outgoing or embedded), or an email the sandbox has no account for`,
    );
  }
  const token = account.outgoing_token ?? randomBytes(16).toString("hex");
  const path = `/outgoing/${encodeURIComponent(name)}`;
  const deadline =
    options.replyDeadlineMs === undefined ? "" : `\n  reply_deadline: ${options.replyDeadlineMs}ms`;
  return {
    global: LISTENER,
    entry: `outgoing_webhook:\n  path: ${path}\n  token: \${${TOKEN_ENV}}${deadline}`,
    env: { [TOKEN_ENV]: token },
    point(daemon) {
      const url = `${daemon.daemon.http!.url!}${path}`;
      control.setOutgoingWebhook(email, {
        url,
        token,
        ...(options.interface ? { interface: options.interface } : {}),
      });
    },
    failed(id) {
      const asked = control.messageView(id);
      const first = control
        .messages()
        .map((m) => control.messageView(m.id as number))
        .find((m) => m && m.id > id && asked && sameConversation(m, asked));
      const notice = first?.sender_email === email && first.client === "OutgoingWebhookResponse";
      if (!notice || !first.content.startsWith("Failure! ")) return undefined;
      return `its delivery failed, and the server posted ${JSON.stringify(first.content)} (message ${first.id}) instead of sending it again`;
    },
    notSent(id) {
      const m = control.messages().find((r) => r.id === id) as
        | { sender_id: number; type: string; dm_user_ids: number[]; flags: Record<string, string[]> }
        | undefined;
      if (!m) return undefined;
      const only =
        "an outgoing-webhook bot is sent only the direct messages to it and the channel messages that mention it";
      if (control.users().find((u) => u.user_id === m.sender_id)?.is_bot)
        return `a bot sent it (${only}, from people)`;
      if (m.type === "private" && m.dm_user_ids.includes(account.user_id)) {
        const format = control.users().find((u) => u.email === email)?.outgoing_interface;
        // The server answers it `Failure! Slack outgoing webhooks don't support direct messages.`
        return format === "slack" ? "the Slack-compatible format carries no direct message" : undefined;
      }
      const sent = m.type !== "private" && (m.flags[String(account.user_id)] ?? []).includes("mentioned");
      return sent ? undefined : only;
    },
  };
}
