/**
 * The queue-registration parameters shared by POST /register and GET /events without a queue_id,
 * validated with the server's messages (see docs/internals/server-behaviour.md#registering-a-queue).
 */
import type { SandboxCore } from "../core.ts";
import { badRequest } from "../http/api-error.ts";
import type { Params } from "../http/params.ts";
import type { UserRecord } from "../state/data.ts";
import { CAPABILITY_KEYS, type ClientCapabilities, type QueueOptions } from "./event-queue.ts";

const MAX_LIFESPAN_SECS = 7 * 24 * 3600;

export interface RegisterParams {
  queue: QueueOptions;
  fetchEventTypes: string[] | null;
  includeSubscribers: "true" | "false" | "partial";
}

function parseCapabilities(params: Params): ClientCapabilities {
  const caps = Object.fromEntries(CAPABILITY_KEYS.map((k) => [k, false])) as unknown as ClientCapabilities;
  const found = params.json("client_capabilities");
  if (!found) return caps;
  const given = found.value as Record<string, unknown>;
  if (typeof given !== "object" || given === null || Array.isArray(given)) {
    throw badRequest("client_capabilities is not a dict");
  }
  if (!("notification_settings_null" in given)) {
    throw badRequest('client_capabilities["notification_settings_null"] field is missing: Field required');
  }
  for (const key of CAPABILITY_KEYS) {
    if (!(key in given)) continue;
    if (typeof given[key] !== "boolean") throw badRequest(`client_capabilities["${key}"] is not a boolean`);
    caps[key] = given[key] as boolean;
  }
  return caps;
}

function parseNarrow(params: Params): [string, string][] {
  const found = params.json("narrow");
  if (!found) return [];
  const value = found.value;
  if (!Array.isArray(value)) throw badRequest("narrow is not a list");
  return value.map((item, i) => {
    if (!Array.isArray(item)) throw badRequest(`narrow[${i}] is not a list`);
    item.forEach((part, j) => {
      if (typeof part !== "string") throw badRequest(`narrow[${i}][${j}] is not a string`);
    });
    if (item.length !== 2) throw badRequest(`Invalid narrow[${i}]`);
    return [item[0], item[1]] as [string, string];
  });
}

export function parseRegisterParams(
  core: SandboxCore,
  user: UserRecord,
  params: Params,
  clientName: string,
): RegisterParams {
  const applyMarkdown = params.bool("apply_markdown") ?? false;
  const clientGravatar = params.bool("client_gravatar", { nullable: true }) ?? true;
  const includeSubscribers =
    params.literal("include_subscribers", ["true", "false", "partial"] as const) ?? "false";
  params.bool("slim_presence");
  params.int("presence_history_limit_days");
  const allPublicRaw = params.bool("all_public_streams", { nullable: true });
  const capabilities = parseCapabilities(params);
  const narrow = parseNarrow(params);
  const eventTypes = params.stringList("event_types", { nullable: true }) ?? null;
  const fetchEventTypes = params.stringList("fetch_event_types", { nullable: true }) ?? null;
  const lifespan = params.int("queue_lifespan_secs") ?? 0;

  const allPublicStreams = allPublicRaw ?? user.default_all_public_streams;
  if (allPublicStreams && user.role === 600) throw badRequest("User not authorized for this query");
  checkEventNarrow(narrow);
  return {
    queue: {
      userId: user.user_id,
      eventTypes,
      narrow,
      allPublicStreams,
      applyMarkdown,
      clientGravatar,
      capabilities,
      lifespanSecs: lifespan > 0 ? Math.min(lifespan, MAX_LIFESPAN_SECS) : core.options.queueTimeoutSeconds,
      clientName,
    },
    fetchEventTypes: fetchEventTypes ?? eventTypes,
    includeSubscribers,
  };
}

const SUPPORTED = new Set(["channel", "stream", "topic", "sender", "is"]);

/** Validate a register `narrow`; unsupported operators are 400 as on the server. */
export function checkEventNarrow(narrow: [string, string][]): void {
  for (const [operator, operand] of narrow) {
    if (!SUPPORTED.has(operator) || (operator === "is" && operand === "followed")) {
      throw badRequest(`Operator ${operator} not supported.`);
    }
  }
}

export interface NarrowMessage {
  type: "stream" | "private";
  streamName: string;
  topic: string;
  senderEmail: string;
}

/** The event-queue narrow predicate, case-insensitive as the server's narrow_predicate. */
export function matchesNarrow(narrow: [string, string][], msg: NarrowMessage, flags: string[]): boolean {
  return narrow.every(([operator, rawOperand]) => {
    const operand = rawOperand.toLowerCase();
    switch (operator) {
      case "channel":
      case "stream":
        return msg.type === "stream" && msg.streamName.toLowerCase() === operand;
      case "topic":
        return msg.type === "stream" && msg.topic.toLowerCase() === operand;
      case "sender":
        return msg.senderEmail.toLowerCase() === operand;
      case "is":
        if (operand === "dm" || operand === "private") return msg.type === "private";
        if (operand === "starred") return flags.includes("starred");
        if (operand === "unread") return !flags.includes("read");
        if (operand === "mentioned" || operand === "alerted") return flags.includes("mentioned");
        return true;
      default:
        return true;
    }
  });
}
