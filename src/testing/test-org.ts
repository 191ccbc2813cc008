/**
 * The org a bot test starts its sandbox with: an org file or an inline org (default: the
 * sandbox's small default org), plus the people a test adds with their roles and groups.
 */
import { loadOrg } from "../sandbox/org/load-org.ts";
import type { OrgInput } from "../sandbox/org/schema.ts";

/** A person a test adds to the org. */
export interface TestUser {
  email: string;
  /** Default: the email's local part. */
  full_name?: string;
  /** Default `member`. */
  role?: "owner" | "admin" | "moderator" | "member" | "guest";
  /** User groups they are in; a group the org lacks is created. */
  groups?: string[];
  /** Channels they are subscribed to; default `["general"]` when the org has it. */
  channels?: string[];
}

/** The org, with `users` added (the org file's errors name the file, line and column). */
export function testOrg(org: string | OrgInput | undefined, users: readonly TestUser[] = []): OrgInput {
  // Parsed, so every list is there; the additions are checked when the sandbox parses it again.
  const parsed = loadOrg(org);
  const channels: OrgChannelInput[] = structuredClone(parsed.channels);
  const groups: OrgGroupInput[] = structuredClone(parsed.user_groups);
  const people: NonNullable<OrgInput["users"]> = structuredClone(parsed.users);
  const hasGeneral = channels.some((c) => c.name === "general");
  for (const [i, user] of users.entries()) {
    if (people.some((p) => p.email === user.email))
      throw new Error(`createBotTest: users[${i}].email: the org already has ${user.email}`);
    people.push({
      email: user.email,
      full_name: user.full_name ?? user.email.split("@")[0]!,
      role: user.role ?? "member",
    });
    for (const name of user.channels ?? (hasGeneral ? ["general"] : [])) {
      const channel = channels.find((c) => c.name === name);
      if (!channel) throw new Error(`createBotTest: users[${i}].channels: the org has no channel "${name}"`);
      channel.subscribers = [...(channel.subscribers ?? []), user.email];
    }
    for (const name of user.groups ?? []) {
      const group = groups.find((g) => g.name === name);
      if (group) group.members = [...(group.members ?? []), user.email];
      else groups.push({ name, members: [user.email] });
    }
  }
  return { ...structuredClone(parsed), users: people, channels, user_groups: groups };
}

type OrgChannelInput = NonNullable<OrgInput["channels"]>[number];
type OrgGroupInput = NonNullable<OrgInput["user_groups"]>[number];
