/**
 * What the organization has now, read in one request: a register call that asks only for the
 * initial state org-sync compares against (no events: the queue it creates is deleted at once).
 * Playgrounds and new-user defaults have no GET endpoint; the register state has them all.
 */
import type { Client } from "bothost";
import { z } from "zod";

const Group = z.looseObject({
  id: z.number().int(),
  name: z.string(),
  members: z.array(z.number().int()),
  is_system_group: z.boolean().optional(),
  deactivated: z.boolean().optional(),
});
const Person = z.looseObject({ user_id: z.number().int(), is_bot: z.boolean(), role: z.number().int() });

const State = z.looseObject({
  realm_user_settings_defaults: z.record(z.string(), z.unknown()).default({}),
  channel_folders: z
    .array(z.looseObject({ name: z.string(), is_archived: z.boolean().optional() }))
    .default([]),
  realm_playgrounds: z
    .array(
      z.looseObject({ name: z.string(), pygments_language: z.string(), url_template: z.string().optional() }),
    )
    .default([]),
  realm_domains: z.array(z.looseObject({ domain: z.string(), allow_subdomains: z.boolean() })).default([]),
  realm_user_groups: z.array(Group).default([]),
  /** Active users only (the register state leaves deactivated ones in realm_non_active_users). */
  realm_users: z.array(Person).default([]),
});

export type OrgState = z.output<typeof State>;
export type OrgGroup = z.output<typeof Group>;
export type OrgPerson = z.output<typeof Person>;

export const STATE_TYPES = [
  "realm_user_settings_defaults",
  "channel_folders",
  "realm_playgrounds",
  "realm_domains",
  "realm_user_groups",
  "realm_user",
] as const;

/**
 * @example
 * ```ts
 * const state = await readOrgState(ctx.api, ctx.signal);
 * state.realm_playgrounds; // [{ id, name, pygments_language, url_template }]
 * ```
 */
export async function readOrgState(client: Client, signal?: AbortSignal): Promise<OrgState> {
  const options = signal ? { signal } : {};
  // Heartbeats are queued whatever the types; asking for them alone keeps the queue empty.
  const reg = await client.events.register(
    {
      event_types: ["heartbeat"],
      fetch_event_types: [...STATE_TYPES],
      client_capabilities: { notification_settings_null: true, include_deactivated_groups: true },
    },
    options,
  );
  if (reg.queue_id) await client.events.deleteQueue(reg.queue_id, options).catch(() => {});
  return State.parse(reg);
}
