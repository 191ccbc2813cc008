/**
 * The server side of recurring bookings: the bot's scheduled messages through its client, the
 * announcement's recipient resolved to ids, and how a booking is recognised in the list.
 */
import type { Client } from "../api/create-client.ts";
import { isApiError } from "../api/errors.ts";
import type { ScheduledMessage } from "../wire/records.ts";
import { type AnnouncementTarget, announcementTarget, matchesBooking } from "./announcement-target.ts";
import type { BookingRecord } from "./booking-records.ts";
import type { RecurringAnnouncement } from "./declarations.ts";

export class BookingServer {
  readonly #client: Client;
  readonly #emptyTopicName: () => string;
  #selfId: number | undefined;

  constructor(client: Client, emptyTopicName: () => string) {
    this.#client = client;
    this.#emptyTopicName = emptyTopicName;
  }

  /** The bot's undelivered scheduled messages, failed ones included. */
  async list(): Promise<ScheduledMessage[]> {
    return (await this.#client.scheduledMessages.list()).scheduled_messages;
  }

  /** Book `content` for the recipient and time of `target`; resolves the new id. */
  async create(target: BookingRecord["target"], content: string): Promise<number> {
    const { scheduled_message_id } = await this.#client.scheduledMessages.create({
      type: target.type === "stream" ? "channel" : "direct",
      to: target.to,
      ...(target.type === "stream" ? { topic: target.topic ?? "" } : {}),
      content,
      scheduled_delivery_timestamp: target.timestamp,
      read_by_sender: true,
    });
    return scheduled_message_id;
  }

  /** Delete a booking; one already sent or deleted (404) is fine. */
  async delete(id: number): Promise<void> {
    try {
      await this.#client.scheduledMessages.delete(id);
    } catch (err) {
      if (!(isApiError(err) && err.status === 404)) throw err;
    }
  }

  async moveTo(id: number, timestamp: number): Promise<void> {
    await this.#client.scheduledMessages.update(id, { scheduled_delivery_timestamp: timestamp });
  }

  async setContent(id: number, content: string): Promise<void> {
    await this.#client.scheduledMessages.update(id, { content });
  }

  /** The announcement's recipient as ids, with the digest of its schedule and recipient. */
  target(id: string, spec: RecurringAnnouncement): Promise<AnnouncementTarget> {
    return announcementTarget(
      this.#client,
      id,
      spec,
      async () => (this.#selfId ??= (await this.#client.users.me()).user_id),
      this.#emptyTopicName(),
    );
  }

  /** True when `sm` is the booking `rec` describes. */
  matches(sm: ScheduledMessage, rec: BookingRecord): boolean {
    return matchesBooking(sm, rec.target, this.#emptyTopicName());
  }
}
