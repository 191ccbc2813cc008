/** Channels: listing, ids by name, topics of a channel, subscribing; channel folders. */
import { z } from "zod";
import { Channel, Topic } from "../../wire/records.ts";
import { path } from "../encode.ts";
import { requireFeature, supports } from "../feature-level.ts";
import type { CallOptions, ResourceContext } from "../transport.ts";

/** GET /streams flags; defaults are the server's. */
export interface ListChannelsParams {
  include_public?: boolean;
  include_web_public?: boolean;
  include_subscribed?: boolean;
  exclude_archived?: boolean;
  /** Every channel the account can see the metadata of (FL 356; sent as include_all_active before). */
  include_all?: boolean;
  include_default?: boolean;
  include_owner_subscribed?: boolean;
  include_can_access_content?: boolean;
  /** Deprecated form of include_all; needs administrator rights. */
  include_all_active?: boolean;
}

export interface SubscribeParams {
  /** Channels by name; a missing one is created with the given description. */
  subscriptions: ReadonlyArray<{ name: string; description?: string }>;
  /** Users to subscribe instead of the caller: ids or emails. */
  principals?: readonly number[] | readonly string[];
  authorization_errors_fatal?: boolean;
  announce?: boolean;
  invite_only?: boolean;
  is_web_public?: boolean;
  is_default_stream?: boolean;
  history_public_to_subscribers?: boolean;
  folder_id?: number;
  send_new_subscription_messages?: boolean;
}

const Streams = z.looseObject({ streams: z.array(Channel) });
const Topics = z.looseObject({ topics: z.array(Topic) });
const StreamId = z.looseObject({ stream_id: z.number().int() });
const Subscribed = z.looseObject({
  subscribed: z.record(z.string(), z.array(z.string())),
  already_subscribed: z.record(z.string(), z.array(z.string())),
  unauthorized: z.array(z.string()).optional(),
});
const FolderCreated = z.looseObject({ channel_folder_id: z.number().int() });

export function channelsApi(ctx: ResourceContext) {
  return {
    /** List channels (GET /streams). */
    async list(params: ListChannelsParams = {}, options: CallOptions = {}) {
      let wire = { ...params };
      if (params.include_all !== undefined && !supports(ctx.state, "channelsIncludeAll")) {
        const { include_all, ...rest } = params;
        wire = { ...rest, include_all_active: include_all };
      }
      return ctx.call("GET", "/streams", wire, options, Streams);
    },

    /** A channel's id by its name (GET /get_stream_id). */
    id: (stream: string, options: CallOptions = {}) =>
      ctx.call("GET", "/get_stream_id", { stream }, options, StreamId),

    /** Topics of a channel with their latest message id (GET /users/me/{stream_id}/topics). */
    topics: (
      stream_id: number,
      params: { allow_empty_topic_name?: boolean } = {},
      options: CallOptions = {},
    ) => ctx.call("GET", path`/users/me/${stream_id}/topics`, params, options, Topics),

    /**
     * Subscribe the account (or `principals`) to channels, creating missing ones
     * (POST /users/me/subscriptions). Repeating it is harmless, so it is retried like a GET.
     */
    subscribe: (params: SubscribeParams, options: CallOptions = {}) =>
      ctx.call("POST", "/users/me/subscriptions", params, { ...options, idempotent: true }, Subscribed),
  };
}

/** Channel folders (feature level 389). */
export function channelFoldersApi(ctx: ResourceContext) {
  return {
    /**
     * Create a channel folder (POST /channel_folders/create; administrators). The server needs
     * `description` present, so it is sent as "" when omitted.
     */
    async create(params: { name: string; description?: string }, options: CallOptions = {}) {
      requireFeature(ctx.state, "channelFolders", "Creating a channel folder (POST /channel_folders/create)");
      const wire = { name: params.name, description: params.description ?? "" };
      return ctx.call("POST", "/channel_folders/create", wire, options, FolderCreated);
    },
  };
}
