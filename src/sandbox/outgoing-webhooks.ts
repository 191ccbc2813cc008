/**
 * Outgoing webhook bots (see docs/internals/server-behaviour.md#outgoing-webhooks): a mention in a
 * channel, or a DM to the bot, POSTs the message to the bot's URL (Zulip JSON or Slack form
 * format); the reply, or a "Failure! …" notice plus an owner DM, is posted back into the
 * conversation.
 */
import type { SandboxCore } from "./core.ts";
import { SANDBOX_ZULIP_VERSION } from "./core.ts";
import { ApiError } from "./http/api-error.ts";
import type { MessageRecord, UserRecord } from "./state/data.ts";
import { renderMarkdown } from "./state/markdown.ts";
import { messageToApi } from "./state/message-view.ts";
import { notifyByBot, type SendTarget, sendMessage } from "./state/send-message.ts";
import { streamById } from "./state/streams.ts";
import { apiEmail, userById } from "./state/users.ts";

const TIMEOUT_MS = 10_000;
const MAX_RETRIES = 3;

type Outcome = { kind: "reply"; content: string } | { kind: "none" } | { kind: "failure"; reason: string };

export class OutgoingWebhooks {
  private readonly pending = new Set<Promise<void>>();
  private readonly abort = new AbortController();

  constructor(private readonly core: SandboxCore) {
    core.afterSend.push((msg) => this.onMessage(msg));
  }

  /** Wait for deliveries in flight (tests), or abort them when stopping. */
  async settle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  stop(): void {
    this.abort.abort();
  }

  private onMessage(msg: MessageRecord): void {
    const data = this.core.data;
    const sender = userById(data, msg.sender_id);
    if (!sender || sender.is_bot) return;
    const mentioned =
      msg.type === "stream"
        ? renderMarkdown(data, msg.content, msg.timestamp * 1000).mentionedUserIds
        : new Set<number>();
    const candidates =
      msg.type === "stream" ? [...mentioned] : msg.dm_user_ids.filter((id) => id !== sender.user_id);
    for (const id of candidates) {
      const bot = userById(data, id);
      if (!bot?.is_active || !bot.outgoing || (bot.bot_type !== 3 && bot.bot_type !== 4)) continue;
      const trigger = msg.type === "stream" ? "mention" : "direct_message";
      const job = this.deliver(bot, msg, trigger).finally(() => this.pending.delete(job));
      this.pending.add(job);
    }
  }

  private async deliver(bot: UserRecord, msg: MessageRecord, trigger: string): Promise<void> {
    const outcome: Outcome =
      bot.outgoing!.interface === "slack" && msg.type === "private"
        ? { kind: "failure", reason: "Slack outgoing webhooks don't support direct messages." }
        : await this.post(bot, msg, trigger);
    if (this.abort.signal.aborted) return;
    const flags = msg.flags[String(bot.user_id)];
    if (flags && !flags.includes("read")) flags.push("read");
    if (outcome.kind === "reply") this.reply(bot, msg, outcome.content);
    if (outcome.kind === "failure") {
      this.reply(bot, msg, `Failure! ${outcome.reason}`);
      this.notifyOwner(bot, msg, outcome.reason);
    }
    this.core.changed();
  }

  private request(bot: UserRecord, msg: MessageRecord, trigger: string): RequestInit {
    const data = this.core.data;
    const service = bot.outgoing!;
    const sender = userById(data, msg.sender_id)!;
    const post = (contentType: string, body: string): RequestInit => ({
      method: "POST",
      headers: { "User-Agent": `ZulipOutgoingWebhook/${SANDBOX_ZULIP_VERSION}`, "Content-Type": contentType },
      body,
    });
    if (service.interface === "slack") {
      const stream = streamById(data, msg.stream_id!)!;
      const form = new URLSearchParams({
        token: service.token,
        team_id: `T${data.realm.id}`,
        team_domain: data.realm.host,
        channel_id: `C${stream.stream_id}`,
        channel_name: stream.name,
        thread_ts: String(msg.timestamp),
        timestamp: String(msg.timestamp),
        user_id: `U${sender.user_id}`,
        user_name: sender.full_name,
        text: msg.content,
        trigger_word: trigger,
        service_id: String(bot.user_id),
      });
      return post("application/x-www-form-urlencoded", form.toString());
    }
    const message = {
      ...messageToApi(data, msg, bot, {
        applyMarkdown: false,
        clientGravatar: false,
        allowEmptyTopicName: true,
      }),
      rendered_content: msg.rendered_content,
    };
    const body = {
      data: msg.content,
      message,
      bot_email: bot.delivery_email,
      bot_full_name: bot.full_name,
      token: service.token,
      trigger,
    };
    return post("application/json", JSON.stringify(body));
  }

  private async post(bot: UserRecord, msg: MessageRecord, trigger: string): Promise<Outcome> {
    const init = this.request(bot, msg, trigger);
    for (let attempt = 0; attempt <= MAX_RETRIES; attempt++) {
      let status: number;
      let text: string;
      try {
        const res = await fetch(bot.outgoing!.url, {
          ...init,
          signal: AbortSignal.any([this.abort.signal, AbortSignal.timeout(TIMEOUT_MS)]),
        });
        status = res.status;
        // The body is part of the request: a connection closed while it comes is a failed try too.
        text = await res.text();
      } catch {
        if (this.abort.signal.aborted) return { kind: "none" };
        continue;
      }
      if (status < 200 || status >= 300)
        return { kind: "failure", reason: `Third party responded with ${status}` };
      return interpret(bot.outgoing!.interface, text);
    }
    return { kind: "failure", reason: "Bot is unavailable" };
  }

  private reply(bot: UserRecord, msg: MessageRecord, content: string): void {
    const data = this.core.data;
    const target: SendTarget =
      msg.type === "stream"
        ? { type: "stream", stream: streamById(data, msg.stream_id!)!, topic: msg.topic }
        : {
            type: "private",
            recipients: msg.dm_user_ids.filter((id) => id !== bot.user_id).map((id) => userById(data, id)!),
            topic: "",
          };
    try {
      sendMessage(this.core, bot, target, content, { client: "OutgoingWebhookResponse", trusted: true });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
    }
  }

  private notifyOwner(bot: UserRecord, msg: MessageRecord, reason: string): void {
    const data = this.core.data;
    const owner = bot.bot_owner_id === null ? undefined : userById(data, bot.bot_owner_id);
    if (!owner?.is_active) return;
    const text =
      `A message to your bot @_**${bot.full_name}|${bot.user_id}** (from ${apiEmail(data, userById(data, msg.sender_id)!)}) ` +
      `triggered an outgoing webhook, which failed: ${reason}`;
    notifyByBot(this.core, owner, text);
  }
}

/** What a 2xx body means (see docs/internals/server-behaviour.md#outgoing-webhooks). */
function interpret(kind: "zulip" | "slack", text: string): Outcome {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { kind: "failure", reason: "Invalid JSON in response" };
  }
  if (body === "") return { kind: "none" };
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { kind: "failure", reason: "Invalid response format" };
  }
  const o = body as Record<string, unknown>;
  if (kind === "slack")
    return typeof o.text === "string" && o.text.trim()
      ? { kind: "reply", content: o.text }
      : { kind: "none" };
  if (o.response_not_required === true) return { kind: "none" };
  const content = o.content ?? o.response_string;
  if (content === undefined || content === null) return { kind: "none" };
  const str = String(content);
  return str.trim() === "" ? { kind: "none" } : { kind: "reply", content: str };
}
