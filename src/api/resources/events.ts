/** The event queue: POST /register, GET /events, DELETE /events. */
import { z } from "zod";
import { type AnyEvent, parseEvent } from "../../wire/events.ts";
import type { Narrow } from "../../wire/records.ts";
import { RegisterResponse } from "../../wire/responses.ts";
import type { CallOptions, ResourceContext } from "../transport.ts";

/** `client_capabilities`; the server requires `notification_settings_null` whenever it is sent. */
export interface ClientCapabilities {
  notification_settings_null: boolean;
  bulk_message_deletion?: boolean;
  user_avatar_url_field_optional?: boolean;
  stream_typing_notifications?: boolean;
  linkifier_url_template?: boolean;
  user_list_incomplete?: boolean;
  include_deactivated_groups?: boolean;
  archived_channels?: boolean;
  empty_topic_name?: boolean;
  simplified_presence_events?: boolean;
  [capability: string]: boolean | undefined;
}

export interface RegisterParams {
  /** Event types queued from now on; omitted = all. */
  event_types?: readonly string[];
  /** Initial state returned; omitted = `event_types`. Include "realm" and "realm_user" for limits and own id. */
  fetch_event_types?: readonly string[];
  narrow?: Narrow;
  all_public_streams?: boolean;
  /** Default false: message content is Markdown. */
  apply_markdown?: boolean;
  client_gravatar?: boolean;
  include_subscribers?: boolean | "partial";
  client_capabilities?: ClientCapabilities;
  /** Idle lifetime of the queue (server default 600, capped at 7 days). */
  queue_lifespan_secs?: number;
  slim_presence?: boolean;
  presence_history_limit_days?: number;
}

export interface GetEventsParams {
  queue_id: string;
  last_event_id?: number;
  /**
   * Answer at once, even with no events (such an answer does not count as a parked poll, so it does
   * not keep the queue alive; see docs/internals/server-behaviour.md#the-event-queue).
   */
  dont_block?: boolean;
}

export interface GetEventsResult {
  /** Parsed events; an unknown type (or a malformed known one) is kept as an unknown event. */
  events: AnyEvent[];
  /** Present on long-poll completions and on queue creation only. */
  queue_id?: string;
}

const EventsBody = z.looseObject({ events: z.array(z.unknown()), queue_id: z.string().optional() });

// Margin over the server's long-poll timeout so a heartbeat always wins the race (see
// docs/internals/server-behaviour.md#the-event-queue).
const longPollMarginMs = 10_000;

export function eventsApi(ctx: ResourceContext) {
  let longPollSeconds = 90;
  return {
    /** Register an event queue (POST /register). Teaches the client the server's feature level. */
    async register(params: RegisterParams = {}, options: CallOptions = {}): Promise<RegisterResponse> {
      // A second queue from a repeated register just expires unused, so retrying is safe.
      const data = await ctx.call(
        "POST",
        "/register",
        params,
        { ...options, idempotent: true },
        RegisterResponse,
      );
      ctx.state.featureLevel = data.zulip_feature_level;
      if (data.event_queue_longpoll_timeout_seconds)
        longPollSeconds = data.event_queue_longpoll_timeout_seconds;
      return data;
    },

    /**
     * Read events (GET /events). Without `dont_block` the call parks until an event or a heartbeat;
     * its timeout defaults to the server's `event_queue_longpoll_timeout_seconds` plus a margin.
     */
    async get(params: GetEventsParams, options: CallOptions = {}): Promise<GetEventsResult> {
      const timeoutMs =
        options.timeoutMs ?? (params.dont_block ? undefined : longPollSeconds * 1000 + longPollMarginMs);
      const data = await ctx.call("GET", "/events", params, { ...options, timeoutMs }, EventsBody);
      const events = data.events.map((raw) => {
        const parsed = parseEvent(raw);
        if (!parsed.known && parsed.issue) {
          ctx.logger.warn(
            { eventId: parsed.event.id, eventType: parsed.event.type, issue: parsed.issue },
            `GET /events: event ${parsed.event.id} of type ${parsed.event.type} did not match its schema; kept as an unknown event`,
          );
        }
        const event = parsed.event;
        if (event.type === "restart" && typeof event.zulip_feature_level === "number") {
          ctx.state.featureLevel = event.zulip_feature_level;
        }
        return event;
      });
      return data.queue_id === undefined ? { events } : { events, queue_id: data.queue_id };
    },

    /** Delete an event queue (DELETE /events). */
    deleteQueue: (queue_id: string, options: CallOptions = {}) =>
      ctx.call("DELETE", "/events", { queue_id }, options),
  };
}
