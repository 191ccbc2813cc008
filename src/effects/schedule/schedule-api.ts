/**
 * One-shot scheduled messages (`ctx.schedule`, `bot.schedule`): book a message on the server for
 * a later time, list, cancel and reschedule. The server delivers it, even while the bot is down.
 */
import type { Logger } from "pino";
import type { Client } from "../../api/create-client.ts";
import { isApiError } from "../../api/errors.ts";
import { type Clock, realClock } from "../../time/clock.ts";
import { codePointLength } from "../limits/code-points.ts";
import { normalizeContent, toSeconds } from "./normalize.ts";
import { keptClientLookups } from "./recipient-ids.ts";
import { type Recipient, type RecipientLookups, resolveRecipient } from "./resolve-recipient.ts";
import { ScheduledMessageError, scheduleInvalid } from "./scheduled-message-error.ts";

/** What {@link ScheduleApi.at} books. */
export interface ScheduleMessageParams {
  /** A channel (name or id), or a list of users (ids or emails) for a direct message. */
  to: Recipient;
  /** Required for a channel. */
  topic?: string;
  /** The message, Markdown. */
  content: string;
  /** When to send it: a `Date` or milliseconds since the epoch. The server sends within about a minute of it. */
  at: Date | number;
}

/** A scheduled message of this bot, as {@link ScheduleApi.list} returns it. */
export interface ScheduledMessageInfo {
  scheduledMessageId: number;
  type: "channel" | "direct";
  /** The channel id, or the user ids of a direct message. */
  to: number | number[];
  /** Channel messages only. */
  topic?: string;
  content: string;
  /** When the server will send it. */
  at: Date;
  /** The server could not send it (too late, no permission…); reschedule it or cancel it. */
  failed: boolean;
}

/**
 * What {@link ScheduleApi.at} gives: the booking's id; or, in a handler run again after the
 * booking's answer was lost and the server had already sent it (its time passed while the bot was
 * down), the id of the message it became. Such a booking is no longer on the server: it has no
 * `scheduledMessageId`, and `cancel`/`reschedule` of this result say it was sent.
 */
export type ScheduleResult =
  | { scheduledMessageId: number; sentMessageId?: undefined }
  | { scheduledMessageId?: undefined; sentMessageId: number };

/**
 * Messages the server sends later, on the bot's behalf (see
 * docs/internals/server-behaviour.md#scheduled-messages). `Booked`: what `at` gives; always a
 * `scheduledMessageId` from `bot.schedule`, which keeps no records and never finds a booking sent.
 *
 * @example
 * ```ts
 * const booking = await ctx.schedule.at({
 *   to: "team", topic: "reminders", content: "Retro in 10 minutes!", at: new Date("2026-05-04T13:50:00Z"),
 * });
 * await ctx.schedule.reschedule(booking, Date.parse("2026-05-04T14:50:00Z"));
 * await ctx.schedule.cancel(booking); // or its id: booking.scheduledMessageId
 * ```
 */
export interface ScheduleApi<Booked extends ScheduleResult = ScheduleResult> {
  /** Book a message; resolves the channel name or emails to ids first. */
  at(params: ScheduleMessageParams): Promise<Booked>;
  /** Cancel a booking (DELETE): its id, or what `at` gave. */
  cancel(booking: number | ScheduleResult): Promise<void>;
  /** This bot's undelivered bookings, failed ones included, by time. */
  list(): Promise<ScheduledMessageInfo[]>;
  /** Move a booking (its id, or what `at` gave) to a new time; the way to revive a failed one (the server needs a new time). */
  reschedule(booking: number | ScheduleResult, at: Date | number): Promise<void>;
}

export interface ScheduleApiOptions {
  client: Client;
  /** What "now" is when checking that a time is in the future. Default: the real clock. */
  clock?: Pick<Clock, "now">;
  /** Aborts the calls (a handler's signal). */
  signal?: AbortSignal;
  /**
   * The server's limits and its empty topic's display name (`realm_empty_topic_display_name`),
   * when known (from the register response).
   */
  limits?: () =>
    | { maxMessageLength: number; maxTopicLength: number; emptyTopicName?: string; featureLevel?: number }
    | undefined;
  /** Where a read-back that could not decide says so (a handler's logger). */
  log?: Pick<Logger, "warn">;
  /** How `to`'s names and emails become ids. Default: the client's, each email's id kept an hour. */
  lookups?: RecipientLookups;
}

const SERVER_PAST = /in the future/i;

/** Builds a {@link ScheduleApi} over a client. */
export function createScheduleApi(options: ScheduleApiOptions): ScheduleApi<{ scheduledMessageId: number }> {
  const { client, signal } = options;
  const clock = options.clock ?? realClock;
  const lookups = options.lookups ?? keptClientLookups(client, clock);
  const call = signal ? { signal } : {};

  const when = (at: unknown, where: string): number => {
    const ms = at instanceof Date ? at.getTime() : at;
    if (typeof ms !== "number" || !Number.isFinite(ms)) {
      throw scheduleInvalid(
        "at",
        `${where}: "at" must be a Date or milliseconds since the epoch; got ${describe(at)}.`,
      );
    }
    const now = clock.now();
    if (ms <= now) {
      throw scheduleInvalid(
        "at",
        `${where}: "at" (${new Date(ms).toISOString()}) is not in the future (it is now ` +
          `${new Date(now).toISOString()}); pick a later time.`,
      );
    }
    return toSeconds(ms);
  };

  /** Makes a server call; refusals the caller can fix become our errors, anything else passes through. */
  const server = <T>(where: string, messageId: number | undefined, request: Promise<T>): Promise<T> =>
    request.catch((err: unknown) => {
      if (!isApiError(err)) throw err;
      if (err.status === 404 || /already (been )?sent/i.test(err.msg)) {
        throw new ScheduledMessageError(
          "SCHEDULE_NOT_FOUND",
          "id",
          `${where}: scheduled message ${messageId} does not exist: it was already sent, cancelled, or belongs to another account.`,
          { cause: err },
        );
      }
      if (SERVER_PAST.test(err.msg)) {
        throw scheduleInvalid(
          "at",
          `${where}: the server says the time is not in the future (its clock may be ahead of this ` +
            `machine's); pick a time at least a minute ahead.`,
          { cause: err },
        );
      }
      if (err.code === "STREAM_DOES_NOT_EXIST") {
        throw scheduleInvalid(
          "to",
          `${where}: "to" channel ${String(err.data.stream_id ?? "")} does not exist or the bot cannot see it.`,
          { cause: err },
        );
      }
      throw err;
    });

  return {
    async at(params) {
      const where = "schedule.at";
      if (typeof params !== "object" || params === null) {
        throw scheduleInvalid("to", `${where}: pass { to, topic, content, at }.`);
      }
      const timestamp = when(params.at, where);
      checkContent(params.content, where, options.limits?.()?.maxMessageLength);
      const target = await resolveRecipient(lookups, params.to, where, signal);
      if (target.kind === "channel") checkTopic(params.topic, where, options.limits?.()?.maxTopicLength);
      const { scheduled_message_id } = await server(
        where,
        undefined,
        client.scheduledMessages.create(
          {
            type: target.kind,
            to: target.to,
            content: params.content,
            ...(target.kind === "channel" ? { topic: params.topic ?? "" } : {}),
            scheduled_delivery_timestamp: timestamp,
            read_by_sender: true,
          },
          call,
        ),
      );
      return { scheduledMessageId: scheduled_message_id };
    },

    async cancel(booking) {
      const where = "schedule.cancel";
      const messageId = bookingId(booking, where);
      await server(where, messageId, client.scheduledMessages.delete(messageId, call));
    },

    async list() {
      const { scheduled_messages } = await client.scheduledMessages.list(call);
      return scheduled_messages.map((sm) => ({
        scheduledMessageId: sm.scheduled_message_id,
        type: sm.type === "stream" ? "channel" : "direct",
        to: sm.to,
        ...(sm.type === "stream" ? { topic: sm.topic ?? "" } : {}),
        content: sm.content,
        at: new Date(sm.scheduled_delivery_timestamp * 1000),
        failed: sm.failed,
      }));
    },

    async reschedule(booking, at) {
      const where = "schedule.reschedule";
      const messageId = bookingId(booking, where);
      const timestamp = when(at, where);
      const update = { scheduled_delivery_timestamp: timestamp };
      await server(where, messageId, client.scheduledMessages.update(messageId, update, call));
    },
  };
}

/**
 * The scheduled message id `booking` names; throws {@link ScheduledMessageError} (field `id`) for
 * a booking `at` found already sent (`SCHEDULE_NOT_FOUND`, naming its message) or anything that
 * is not an id (`SCHEDULE_INVALID`).
 */
export function bookingId(booking: unknown, where: string): number {
  const given =
    typeof booking === "object" && booking !== null
      ? (booking as Partial<Record<string, unknown>>)
      : undefined;
  if (given && typeof given.sentMessageId === "number") {
    throw new ScheduledMessageError(
      "SCHEDULE_NOT_FOUND",
      "id",
      `${where}: the booking was already sent, as message ${given.sentMessageId}; there is no booking left to change.`,
    );
  }
  const value = given ? given.scheduledMessageId : booking;
  if (typeof value === "number" && Number.isInteger(value) && value > 0) return value;
  const hint =
    value === undefined
      ? " (a booking schedule.at found already sent has no scheduledMessageId: its result's sentMessageId names the message it became)"
      : "";
  throw scheduleInvalid(
    "id",
    `${where}: the id must be a scheduledMessageId from schedule.at() or schedule.list(); got ${describe(value)}${hint}.`,
  );
}

function checkContent(content: unknown, where: string, max: number | undefined): void {
  if (typeof content !== "string" || normalizeContent(content) === "") {
    throw scheduleInvalid(
      "content",
      `${where}: "content" must be a non-empty string (Markdown); got ${describe(content)}.`,
    );
  }
  if (max !== undefined && codePointLength(content) > max) {
    throw scheduleInvalid(
      "content",
      `${where}: "content" is ${codePointLength(content)} characters; the server allows ${max}. Shorten it or split it into several messages.`,
    );
  }
}

function checkTopic(topic: unknown, where: string, max: number | undefined): void {
  if (typeof topic !== "string") {
    throw scheduleInvalid(
      "topic",
      `${where}: "topic" is required for a channel message; got ${describe(topic)}.`,
    );
  }
  if (max !== undefined && codePointLength(topic.trim()) > max) {
    throw scheduleInvalid(
      "topic",
      `${where}: "topic" is ${codePointLength(topic.trim())} characters; the server allows ${max}.`,
    );
  }
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value instanceof Date) return "an invalid Date";
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === "number" || typeof value === "boolean" || value === null) return String(value);
  return Array.isArray(value) ? "a list" : typeof value;
}
