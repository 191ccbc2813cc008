/** Carries out one planned action with the bot's client (the server checks permissions). */
import type { Client } from "bothost";
import type { Action } from "./plan.ts";

/**
 * @example
 * ```ts
 * await applyAction(ctx.api, { kind: "channel_folder", name: "Teams", description: "" }, ctx.signal);
 * ```
 */
export async function applyAction(client: Client, action: Action, signal?: AbortSignal): Promise<void> {
  const options = signal ? { signal } : {};
  switch (action.kind) {
    case "user_settings_defaults":
      return client.realm.updateUserSettingsDefaults(action.changes, options);
    case "channel_folder":
      await client.channelFolders.create({ name: action.name, description: action.description }, options);
      return;
    case "playground": {
      const { name, pygments_language, url_template } = action;
      await client.realm.createPlayground({ name, pygments_language, url_template }, options);
      return;
    }
    case "email_domain":
      await client.realm.addDomain(
        { domain: action.domain, allow_subdomains: action.allow_subdomains },
        options,
      );
      return;
    case "group_members":
      return client.userGroups.updateMembers(action.groupId, { add: action.add }, options);
  }
}
