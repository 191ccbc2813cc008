/** Facts about the server itself. */
import { ServerSettings } from "../../wire/responses.ts";
import type { CallOptions, ResourceContext } from "./context.ts";

export function serverApi(ctx: ResourceContext) {
  return {
    /**
     * Version, feature level and public settings (GET /server_settings). Sent without credentials,
     * so it works (and tells the server apart) even when the API key is wrong. Teaches the client
     * the server's feature level.
     *
     * @example
     * ```ts
     * const { zulip_feature_level } = await client.server.settings();
     * ```
     */
    async settings(options: CallOptions = {}) {
      const data = await ctx.request(
        "GET",
        "/server_settings",
        {},
        { ...options, schema: ServerSettings, auth: false },
      );
      ctx.state.featureLevel = data.zulip_feature_level;
      return data;
    },
  };
}

export type ServerApi = ReturnType<typeof serverApi>;
