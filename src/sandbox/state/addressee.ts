/**
 * Reading where a message goes: the `to` forms of POST /messages (NOTES §7), topic
 * normalisation, and the server's truncation rules for content and topics.
 */
import { badRequest } from "../http/api-error.ts";
import type { SandboxData } from "./data.ts";

export const MAX_MESSAGE_LENGTH = 10000;
export const MAX_TOPIC_LENGTH = 60;

/** Cut to `max` code points, ending with `suffix`, as the server's truncate_content. */
export function truncate(text: string, max: number, suffix: string): string {
  const points = [...text];
  if (points.length <= max) return text;
  return points.slice(0, max - [...suffix].length).join("") + suffix;
}

/** Strip, map "(no topic)" and the empty-topic display name to "", and truncate. */
export function normalizeTopic(data: SandboxData, raw: string): string {
  const topic = raw.trim();
  if (topic.includes("\u0000")) throw badRequest("Topic must not contain null bytes");
  if (topic === "(no topic)" || topic === data.realm.empty_topic_display_name) return "";
  return truncate(topic, MAX_TOPIC_LENGTH, "...");
}

/** Message content: trailing whitespace and leading newlines dropped; empty is an error. */
export function normalizeContent(raw: string): string {
  const body = raw.replace(/\s+$/u, "").replace(/^\n+/, "");
  if (body === "") throw badRequest("Message must not be empty");
  if (body.includes("\u0000")) throw badRequest("Message must not contain null bytes");
  return truncate(body, MAX_MESSAGE_LENGTH, "\n[message truncated]");
}

/** A stream `to`: a raw name, a JSON string, a JSON int id, or a one-element JSON list. */
export function parseStreamTo(raw: string): string | number {
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    return raw;
  }
  if (Array.isArray(data)) {
    if (data.length !== 1) throw badRequest("Expected exactly one channel");
    data = data[0];
  }
  if (typeof data === "string") return data;
  if (typeof data === "number" && Number.isInteger(data)) return data;
  throw badRequest("Invalid data type for channel");
}

/** DM recipients: a JSON list of ids or of emails (not mixed), a JSON string, or comma-separated emails. */
export function parseDirectTo(raw: string): number[] | string[] {
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    data = raw;
  }
  if (typeof data === "string") data = data.split(",");
  if (!Array.isArray(data)) throw badRequest("Invalid data type for recipients");
  if (data.length === 0) return [];
  if (typeof data[0] === "number") {
    if (!data.every((v) => typeof v === "number" && Number.isInteger(v))) {
      throw badRequest("Recipient lists may contain emails or user IDs, but not both.");
    }
    return [...new Set(data as number[])];
  }
  if (!data.every((v) => typeof v === "string")) {
    throw badRequest("Recipient lists may contain emails or user IDs, but not both.");
  }
  return [...new Set((data as string[]).map((e) => e.trim()).filter((e) => e !== ""))];
}

/** Normalise the `type` of a message: direct→private, channel→stream. */
export function messageType(raw: string): "stream" | "private" {
  if (raw === "stream" || raw === "channel") return "stream";
  if (raw === "private" || raw === "direct") return "private";
  throw badRequest("Invalid type");
}
