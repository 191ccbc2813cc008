/**
 * What org-sync would change: the settings compared with the organization's state, as a list
 * of actions (pure: no server). Only what is missing or different is planned, so planning again
 * after applying the plan yields nothing. Differences org-sync does not change are `notes`.
 */
import type { OrgPerson, OrgState } from "./org-state.ts";
import { type MembershipRule, type OrgSyncSettings, ROLE_VALUES } from "./settings.ts";

export type Action =
  | { kind: "user_settings_defaults"; changes: Record<string, boolean | number | string> }
  | { kind: "channel_folder"; name: string; description: string }
  | { kind: "playground"; name: string; pygments_language: string; url_template: string }
  | { kind: "email_domain"; domain: string; allow_subdomains: boolean }
  | { kind: "group_members"; group: string; groupId: number; add: number[] };

export interface Plan {
  actions: Action[];
  /** Differences left alone (org-sync only adds), and rules it cannot apply. */
  notes: string[];
}

/**
 * @example
 * ```ts
 * planSync(settings, await readOrgState(client));
 * // { actions: [{ kind: "channel_folder", name: "Teams", description: "" }], notes: [] }
 * ```
 */
export function planSync(settings: OrgSyncSettings, state: OrgState): Plan {
  const plan: Plan = { actions: [], notes: [] };
  const changes: Record<string, boolean | number | string> = {};
  for (const [key, value] of Object.entries(settings.user_settings_defaults)) {
    if (value !== undefined && state.realm_user_settings_defaults[key] !== value) changes[key] = value;
  }
  if (Object.keys(changes).length > 0) plan.actions.push({ kind: "user_settings_defaults", changes });

  const folders = new Set(
    state.channel_folders.filter((f) => !f.is_archived).map((f) => f.name.toLowerCase()),
  );
  for (const f of settings.channel_folders) {
    if (!folders.has(f.name.toLowerCase())) plan.actions.push({ kind: "channel_folder", ...f });
  }

  for (const p of settings.playgrounds) {
    const same = state.realm_playgrounds.find(
      (q) => q.name === p.name && q.pygments_language === p.pygments_language,
    );
    if (!same) plan.actions.push({ kind: "playground", ...p });
    else if (same.url_template !== undefined && same.url_template !== p.url_template) {
      plan.notes.push(
        `playground "${p.name}" (${p.pygments_language}) has url_template ${same.url_template}; left as it is`,
      );
    }
  }

  for (const d of settings.email_domains) {
    const same = state.realm_domains.find((q) => q.domain.toLowerCase() === d.domain);
    if (!same) plan.actions.push({ kind: "email_domain", ...d });
    else if (same.allow_subdomains !== d.allow_subdomains) {
      plan.notes.push(
        `email domain ${d.domain} has allow_subdomains: ${same.allow_subdomains}; left as it is`,
      );
    }
  }

  for (const rule of settings.group_membership) {
    const action = membershipAction(rule, state, state.realm_users);
    if (typeof action === "string") plan.notes.push(action);
    else if (action) plan.actions.push(action);
  }
  return plan;
}

/** Whether `person` belongs in the rule's group. */
export function matchesRule(rule: MembershipRule, person: Pick<OrgPerson, "is_bot" | "role">): boolean {
  if (person.is_bot && !rule.include_bots) return false;
  return rule.roles === undefined || rule.roles.some((r) => ROLE_VALUES[r] === person.role);
}

/** The members to add for one rule, a note when the group cannot be used, or nothing to do. */
export function membershipAction(
  rule: MembershipRule,
  state: Pick<OrgState, "realm_user_groups">,
  people: readonly OrgPerson[],
): Action | string | undefined {
  const group = state.realm_user_groups.find((g) => g.name === rule.group && !g.deactivated);
  if (!group) return `no active user group named "${rule.group}": create it, then org-sync fills it`;
  if (group.is_system_group)
    return `"${rule.group}" is a system group; its members follow roles, not org-sync`;
  const members = new Set(group.members);
  const add = people
    .filter((p) => !members.has(p.user_id) && matchesRule(rule, p))
    .map((p) => p.user_id)
    .sort((a, b) => a - b);
  return add.length > 0 ? { kind: "group_members", group: group.name, groupId: group.id, add } : undefined;
}

/** One line for the log, e.g. `create channel folder "Teams"`. */
export function describeAction(action: Action): string {
  switch (action.kind) {
    case "user_settings_defaults":
      return `set new-user defaults ${Object.entries(action.changes)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(", ")}`;
    case "channel_folder":
      return `create channel folder "${action.name}"`;
    case "playground":
      return `add code playground "${action.name}" for ${action.pygments_language} (${action.url_template})`;
    case "email_domain":
      return `allow email domain ${action.domain}${action.allow_subdomains ? " and its subdomains" : ""}`;
    case "group_members":
      return `add users ${action.add.join(", ")} to group "${action.group}"`;
  }
}
