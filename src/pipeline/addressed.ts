/**
 * The author's vocabulary for a message: whether it is addressed to the bot (a one-to-one direct
 * message, or a mention of the bot), its text without the bot's own mention, where it was said
 * (`Where`) and who said it (`Sender`). Each reads the event and the bot's caches: no request.
 */
import type { SendMessageParams } from "../api/resources/messages.ts";
import { type RoleName, roleName } from "../effects/users/roles.ts";
import type { AnyEvent } from "../wire/events.ts";
import type { Message, User } from "../wire/records.ts";

/** Where a message was said: a channel and topic, or a direct conversation (everyone in it but the bot). */
export type Where = { channel: string; channelId: number; topic: string } | { direct: number[] };

/** Who sent a message: from the message itself, role and bot flag from the users cache. */
export interface Sender {
  id: number;
  name: string;
  email: string;
  /** The sender's role by name; `undefined` when the users cache does not hold them (see `bot.track("users")`). */
  role: RoleName | undefined;
  /**
   * Whether the sender is a bot: one of the server's system bots (the Notification Bot, …), or a
   * user the users cache holds; `undefined` when the users cache does not hold them.
   */
  isBot: boolean | undefined;
}

/** The bot as a mention names it. */
export interface SelfRef {
  userId: number;
  fullName?: string | undefined;
}

export interface AddressOptions {
  /** Also count `@**all**`, `@**channel**`, `@**topic**` (the wildcard mentions) as addressed. Default false. */
  wildcards?: boolean;
}

const WILDCARD_FLAGS = ["stream_wildcard_mentioned", "topic_wildcard_mentioned", "wildcard_mentioned"];
/** A personal mention: `@**Name**` or `@**Name|12**`; a silent one (`@_**…**`) does not match. */
const MENTION = /@\*\*([^*|]+?)(?:\|(\d+))?\*\*/g;

/** The event's message; `undefined` for other events and for a message event that failed its schema. */
function messageOf(event: AnyEvent): Message | undefined {
  if (event.type !== "message") return undefined;
  const m = (event as { message?: Partial<Message> }).message;
  return typeof m?.content === "string" && typeof m.sender_id === "number" ? (m as Message) : undefined;
}

function isSelf(name: string, id: string | undefined, self: SelfRef): boolean {
  if (id !== undefined) return Number(id) === self.userId;
  return self.fullName !== undefined && name.trim().toLowerCase() === self.fullName.toLowerCase();
}

/** Where the content mentions the bot personally: [start, end) of each mention. */
function selfMentions(content: string, self: SelfRef): [number, number][] {
  const found: [number, number][] = [];
  if (!content.includes("@**")) return found;
  for (const m of content.matchAll(MENTION)) {
    if (isSelf(m[1]!, m[2], self)) found.push([m.index, m.index + m[0].length]);
  }
  return found;
}

/** A mention at the start of a message, and the wildcard mentions (they name everyone, the bot too). */
const LEADING_MENTION = /^\s*@\*\*([^*|]+?)(?:\|(\d+))?\*\*/;
const WILDCARDS = new Set(["all", "everyone", "stream", "channel", "topic"]);

/**
 * Whether `content` begins by naming someone other than the bot (`@**deploy-bot** 1.4`) and
 * names the bot nowhere: in a channel topic, it is said to them.
 */
export function saidToOther(content: string, self: SelfRef): boolean {
  const first = LEADING_MENTION.exec(content);
  if (first === null || isSelf(first[1]!, first[2], self)) return false;
  return !WILDCARDS.has(first[1]!.trim().toLowerCase()) && selfMentions(content, self).length === 0;
}

/** A direct message between the sender and the bot alone (a group DM needs a mention). */
function isOneToOne(m: Message, self: SelfRef): boolean {
  if (m.type !== "private" || !Array.isArray(m.display_recipient)) return false;
  for (const u of m.display_recipient) if (u.id !== self.userId && u.id !== m.sender_id) return false;
  return true;
}

/** Why a message is addressed to the bot, if it is. */
export function addressOf(
  event: AnyEvent,
  self: SelfRef,
  options: AddressOptions = {},
): "direct" | "mention" | "wildcard" | undefined {
  const m = messageOf(event);
  if (m === undefined || m.sender_id === self.userId) return undefined;
  if (isOneToOne(m, self)) return "direct";
  const raw = (event as { flags?: unknown }).flags;
  const flags = Array.isArray(raw) ? (raw as string[]) : [];
  // The server sets `mentioned` only for a real mention (not silent, not in code); the content
  // says whether it was the bot's own name rather than a group's.
  if (flags.includes("mentioned") && selfMentions(m.content, self).length > 0) return "mention";
  if (options.wildcards && flags.some((f) => WILDCARD_FLAGS.includes(f))) return "wildcard";
  return undefined;
}

/** The `addressed` filter's test for `value` (`true`, `false` or `{ wildcards }`); `undefined` for another value. */
export function addressedFilter(
  value: unknown,
): ((ctx: { event: AnyEvent; bot: SelfRef }) => boolean) | undefined {
  const wildcards = (value as { wildcards?: unknown } | null)?.wildcards;
  if (typeof value !== "boolean" && typeof wildcards !== "boolean") return undefined;
  const want = value !== false;
  const options = { wildcards: wildcards === true };
  return (ctx) => (addressOf(ctx.event, ctx.bot, options) !== undefined) === want;
}

/** The content without the bot's own mentions (other mentions kept), trimmed. */
export function textOf(event: AnyEvent, self: SelfRef): string {
  const m = messageOf(event);
  if (m === undefined) {
    const content = (event as { content?: unknown }).content;
    return typeof content === "string" ? content.trim() : "";
  }
  let text = m.content;
  for (const [start, end] of selfMentions(text, self).reverse()) {
    text = `${text.slice(0, start).trimEnd()} ${text.slice(end).trimStart()}`;
  }
  return text.trim();
}

/** Where a message was said; `undefined` for other events. */
export function whereOf(event: AnyEvent, self: SelfRef): Where | undefined {
  const m = messageOf(event);
  if (m === undefined) return undefined;
  if (m.type === "stream") {
    const channel = typeof m.display_recipient === "string" ? m.display_recipient : String(m.stream_id);
    return { channel, channelId: m.stream_id ?? -1, topic: m.subject };
  }
  const people = Array.isArray(m.display_recipient) ? m.display_recipient.map((u) => u.id) : [m.sender_id];
  const others = people.filter((id) => id !== self.userId);
  return { direct: others.length > 0 ? others : [m.sender_id] };
}

/** A message to a {@link Where}: `ctx.send({ ...ctx.where, content })`. */
export type SendTo = Where & { content: string };

/** A {@link SendTo} as the parameters of `POST /messages`. */
export function sendParams(to: SendTo): SendMessageParams {
  if ("direct" in to) return { type: "direct", to: [...to.direct], content: to.content };
  return {
    type: "channel",
    to: to.channelId > 0 ? to.channelId : to.channel,
    topic: to.topic,
    content: to.content,
  };
}

/**
 * Who sent a message; `undefined` for other events. `peek` reads the users cache, `systemBot`
 * tells the server's system bots.
 */
export function senderOf(
  event: AnyEvent,
  peek: (id: number) => User | undefined,
  systemBot: (id: number, email: string) => boolean = () => false,
): Sender | undefined {
  const m = messageOf(event);
  if (m === undefined) return undefined;
  const user = systemBot(m.sender_id, m.sender_email) ? { is_bot: true, role: undefined } : peek(m.sender_id);
  return {
    id: m.sender_id,
    name: m.sender_full_name,
    email: m.sender_email,
    role: roleName(user?.role),
    isBot: user?.is_bot,
  };
}
