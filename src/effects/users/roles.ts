/**
 * The server's roles by name. A user record carries its role as a number (100 owner,
 * 200 administrator, 300 moderator, 400 member, 600 guest); a smaller number is more privileged.
 */

/** A role's name, as bots, commands and the config spell it. */
export type RoleName = "owner" | "admin" | "moderator" | "member" | "guest";

/**
 * The server's role numbers by name: compare with `<=` for "this role or above".
 *
 * @example
 * ```ts
 * const role = ctx.sender?.role;
 * if (role !== undefined && Role[role] <= Role.moderator) await ctx.reply("As you wish.");
 * ```
 */
export const Role = Object.freeze({
  owner: 100,
  admin: 200,
  moderator: 300,
  member: 400,
  guest: 600,
} as const);

/** Every role name, most privileged first. */
export const ROLE_NAMES: readonly RoleName[] = ["owner", "admin", "moderator", "member", "guest"];

/** The name of a role number; `undefined` for a number the server does not define. */
export function roleName(role: number | undefined): RoleName | undefined {
  return ROLE_NAMES.find((name) => Role[name] === role);
}

/** Whether `role` is `least` or a more privileged role. */
export function isAtLeast(role: RoleName | undefined, least: RoleName): boolean {
  return role !== undefined && Role[role] <= Role[least];
}
