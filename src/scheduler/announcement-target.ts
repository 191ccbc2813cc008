/**
 * Where and what a recurring announcement sends, in the server's terms, and how to recognise its
 * booking among the bot's scheduled messages.
 */
import type { Client } from "../api/create-client.ts";
import { digest, normalizeContent, normalizeTopic } from "../effects/schedule/normalize.ts";
import { resolveRecipient } from "../effects/schedule/resolve-recipient.ts";
import type { ScheduledMessage } from "../wire/records.ts";
import type { BookingRecord } from "./booking-records.ts";
import type { RecurringAnnouncement } from "./declarations.ts";

/** An announcement's recipient as the server lists it, and the digest of its schedule and recipient. */
export interface AnnouncementTarget {
  type: "stream" | "private";
  to: number | number[];
  /** Normalized; channels only. */
  topic?: string;
  /** Changes when the cron, the time zone or the recipient changes (not the content). */
  specHash: string;
}

/**
 * Resolves the announcement's `to` (names and emails to ids). Direct-message recipients are
 * listed by the server without the sender unless the message is to the sender alone (NOTES §4.4),
 * so the bot's own id is dropped the same way.
 */
export async function announcementTarget(
  client: Client,
  id: string,
  spec: RecurringAnnouncement,
  selfId: () => Promise<number>,
  emptyTopicName: string,
): Promise<AnnouncementTarget> {
  const resolved = await resolveRecipient(client, spec.to, `announcement "${id}"`);
  let target: Omit<AnnouncementTarget, "specHash">;
  if (resolved.kind === "channel") {
    target = { type: "stream", to: resolved.to, topic: normalizeTopic(spec.topic, emptyTopicName) };
  } else {
    const self = await selfId();
    const others = resolved.to.filter((u) => u !== self);
    target = { type: "private", to: others.length > 0 ? others : [self] };
  }
  const specHash = digest([spec.cron, spec.timezone, target.type, target.to, target.topic ?? null]);
  return { ...target, specHash };
}

/** The digest stored to recognise content without keeping a copy of it. */
export function contentHash(content: string): string {
  return digest(normalizeContent(content));
}

/** True when `sm` is the booking `target` describes (same recipient, topic, time and content). */
export function matchesBooking(
  sm: ScheduledMessage,
  target: BookingRecord["target"],
  emptyTopicName: string,
): boolean {
  if (sm.type !== target.type || sm.scheduled_delivery_timestamp !== target.timestamp) return false;
  if (JSON.stringify(sorted(sm.to)) !== JSON.stringify(sorted(target.to))) return false;
  if (sm.type === "stream" && normalizeTopic(sm.topic, emptyTopicName) !== (target.topic ?? "")) return false;
  return contentHash(sm.content) === target.contentHash;
}

function sorted(to: number | readonly number[]): number | number[] {
  return typeof to === "number" ? to : [...to].sort((a, b) => a - b);
}
