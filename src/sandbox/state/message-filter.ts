/**
 * GET /messages narrows: parsing the two wire forms (dicts or pairs) and turning them into a
 * predicate, plus which messages a user may search at all (channel history vs own messages).
 */
import { featureLevels } from "../../wire/feature-levels.ts";
import { ApiError, badRequest } from "../http/api-error.ts";
import type { MessageRecord, SandboxData, StreamRecord, UserRecord } from "./data.ts";
import { canAccessContent, streamById, streamByName } from "./streams.ts";
import { userByDeliveryEmail, userById } from "./users.ts";

export interface NarrowTerm {
  operator: string;
  operand: unknown;
  negated: boolean;
}

/** As the server says it: `desc` (untranslated) names what is wrong, in `msg` too. */
const badNarrow = (what: string) =>
  new ApiError(400, "BAD_NARROW", `Invalid narrow operator: ${what}`, { desc: what });

export function parseNarrowParam(value: unknown): NarrowTerm[] {
  if (!Array.isArray(value)) throw badRequest("narrow is not a list");
  return value.map((item, i) => {
    if (Array.isArray(item)) {
      if (item.length !== 2) throw badRequest(`Invalid narrow[${i}]`);
      return { operator: String(item[0]), operand: item[1], negated: false };
    }
    if (typeof item === "object" && item !== null && "operator" in item && "operand" in item) {
      const o = item as { operator: unknown; operand: unknown; negated?: unknown };
      if (typeof o.operator !== "string") throw badRequest(`narrow[${i}]["operator"] is not a string`);
      return { operator: o.operator, operand: o.operand, negated: o.negated === true };
    }
    throw badRequest(`Invalid narrow[${i}]`);
  });
}

type Predicate = (msg: MessageRecord) => boolean;

function resolveUser(data: SandboxData, operand: unknown): UserRecord {
  const user =
    typeof operand === "number" ? userById(data, operand) : userByDeliveryEmail(data, String(operand));
  if (!user) throw badNarrow(`unknown user ${String(operand)}`);
  return user;
}

function resolveStream(data: SandboxData, operand: unknown): StreamRecord {
  const stream =
    typeof operand === "number" || /^\d+$/.test(String(operand))
      ? streamById(data, Number(operand))
      : streamByName(data, String(operand));
  if (!stream) throw badNarrow(`unknown channel ${String(operand)}`);
  return stream;
}

function dmIds(data: SandboxData, operand: unknown): number[] {
  if (Array.isArray(operand)) return operand.map((o) => resolveUser(data, o).user_id);
  if (typeof operand === "number") return [resolveUser(data, operand).user_id];
  return String(operand)
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((e) => resolveUser(data, /^\d+$/.test(e) ? Number(e) : e).user_id);
}

/**
 * From feature level 334 the first `topic` term naming the empty topic's display name ("general
 * chat", exactly) narrows to the empty topic `""`, as the server's message fetch rewrites it.
 * "(no topic)" is not rewritten: a send maps it to `""`, a narrow does not.
 */
function emptyTopicTerms(data: SandboxData, terms: NarrowTerm[]): NarrowTerm[] {
  if (data.realm.feature_level < featureLevels.emptyTopicValid) return terms;
  const i = terms.findIndex((t) => t.operator === "topic");
  if (i < 0 || terms[i]!.operand !== data.realm.empty_topic_display_name) return terms;
  return terms.map((t, j) => (j === i ? { ...t, operand: "" } : t));
}

export function buildFilter(data: SandboxData, user: UserRecord, narrow: NarrowTerm[]): Predicate {
  const me = String(user.user_id);
  const terms = emptyTopicTerms(data, narrow);
  const preds = terms.map((t): Predicate => {
    const p = termPredicate(data, user, me, t);
    return t.negated ? (m) => !p(m) : p;
  });
  return (m) => preds.every((p) => p(m));
}

function termPredicate(data: SandboxData, user: UserRecord, me: string, t: NarrowTerm): Predicate {
  const text = String(t.operand ?? "").toLowerCase();
  switch (t.operator) {
    case "channel":
    case "stream": {
      const id = resolveStream(data, t.operand).stream_id;
      return (m) => m.stream_id === id;
    }
    case "channels":
    case "streams":
      return (m) => m.type === "stream" && !streamById(data, m.stream_id!)?.invite_only;
    case "topic":
      return (m) => m.type === "stream" && m.topic.toLowerCase() === text;
    case "sender": {
      const id = resolveUser(data, t.operand).user_id;
      return (m) => m.sender_id === id;
    }
    case "dm":
    case "pm-with": {
      const ids = [...new Set([...dmIds(data, t.operand), user.user_id])].sort((a, b) => a - b).join(",");
      return (m) => m.type === "private" && m.dm_user_ids.join(",") === ids;
    }
    case "dm-including":
    case "group-pm-with": {
      const id = resolveUser(data, t.operand).user_id;
      return (m) => m.type === "private" && m.dm_user_ids.includes(id);
    }
    case "id": {
      const id = Number(t.operand);
      return (m) => m.id === id;
    }
    case "search":
      return (m) => m.content.toLowerCase().includes(text) || m.topic.toLowerCase().includes(text);
    case "has":
      if (text === "reaction") return (m) => m.reactions.length > 0;
      if (text === "link") return (m) => /https?:\/\//.test(m.content);
      return () => false;
    case "is":
      switch (text) {
        case "dm":
        case "private":
          return (m) => m.type === "private";
        case "starred":
          return (m) => (m.flags[me] ?? []).includes("starred");
        case "mentioned":
        case "alerted":
          return (m) =>
            (m.flags[me] ?? []).some((f) => f === "mentioned" || f.endsWith("wildcard_mentioned"));
        case "unread":
          return (m) => m.flags[me] !== undefined && !m.flags[me]!.includes("read");
        case "resolved":
          return (m) => m.topic.startsWith("✔ ");
        default:
          throw badNarrow(`unknown 'is' operand ${text}`);
      }
    case "near":
    case "anchor":
    case "with":
      return () => true;
    default:
      throw badNarrow(`unknown operator ${t.operator}`);
  }
}

/**
 * The messages a narrow may search (the server's ok_to_include_history): a whole channel's history
 * when the narrow names a channel the user can read with shared history, every public channel's
 * when it has `channels:public` (not for guests), none with an `is` term other than
 * `is:resolved`; otherwise only the messages the user holds (received, sent, or kept: a message
 * moved to a channel the user is not subscribed to is no longer held).
 */
export function searchableMessages(
  data: SandboxData,
  user: UserRecord,
  terms: NarrowTerm[],
): MessageRecord[] {
  const me = String(user.user_id);
  const channel = terms.find((t) => !t.negated && (t.operator === "channel" || t.operator === "stream"));
  const stream = channel ? resolveStream(data, channel.operand) : undefined;
  const noHistory = terms.some((t) => t.operator === "is" && t.operand !== "resolved");
  const channelHistory =
    !noHistory &&
    stream !== undefined &&
    canAccessContent(data, user, stream) &&
    (stream.history_public_to_subscribers || !stream.invite_only);
  const publicHistory =
    !noHistory &&
    user.role !== 600 &&
    terms.some(
      (t) => !t.negated && (t.operator === "channels" || t.operator === "streams") && t.operand === "public",
    );
  const isPublicChannel = (m: MessageRecord) =>
    m.type === "stream" && streamById(data, m.stream_id!)?.invite_only === false;
  return data.messages.filter(
    (m) =>
      m.flags[me] !== undefined ||
      (channelHistory && m.stream_id === stream!.stream_id) ||
      (publicHistory && isPublicChannel(m)),
  );
}
