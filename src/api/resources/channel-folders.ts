/** Channel folders (feature level 389). */
import { z } from "zod";
import { requireFeature } from "../feature-level.ts";
import type { CallOptions, ResourceContext } from "./context.ts";

const Created = z.looseObject({ channel_folder_id: z.number().int() });

export function channelFoldersApi(ctx: ResourceContext) {
  return {
    /**
     * Create a channel folder (POST /channel_folders/create; administrators). The server needs
     * `description` present, so it is sent as "" when omitted.
     *
     * @example
     * ```ts
     * const { channel_folder_id } = await client.channelFolders.create({ name: "Teams" });
     * ```
     */
    async create(params: { name: string; description?: string }, options: CallOptions = {}) {
      requireFeature(ctx.state, "channelFolders", "Creating a channel folder (POST /channel_folders/create)");
      const wire = { name: params.name, description: params.description ?? "" };
      return ctx.request("POST", "/channel_folders/create", wire, { ...options, schema: Created });
    },
  };
}

export type ChannelFoldersApi = ReturnType<typeof channelFoldersApi>;
