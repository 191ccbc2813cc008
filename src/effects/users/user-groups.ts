/**
 * The organization's user groups and their members, for permission checks that must cost no
 * request per message: seeded from a registration's `realm_user_groups` and kept current by the
 * queue's `user_group` events (`add`, `update`, `remove`, `add_members`, `remove_members`,
 * `add_subgroups`, `remove_subgroups`). A group's members include its subgroups' members.
 */

/** One group as `realm_user_groups` lists it and a `user_group` `add` event carries it. */
interface GroupRecord {
  id: number;
  name: string;
  members: number[];
  direct_subgroup_ids: number[];
  deactivated?: boolean;
}

interface Group {
  name: string;
  members: Set<number>;
  subgroups: Set<number>;
  deactivated: boolean;
}

/** `ctx.groups`: who is in which user group, from the bot's cache (no request). */
export interface GroupMembership {
  /** Whether the user is in the group (by name, case-insensitive, or id), directly or through a subgroup. */
  has(group: string | number, userId: number): boolean;
  /**
   * The members of a group (by name, case-insensitive, or id), its subgroups' members included:
   * user ids, ascending, for `ctx.send({ type: "direct", to: … })` or `ctx.users.get(id)`.
   * `undefined` when no such group is known; none for a deactivated group.
   *
   * @example
   * ```ts
   * for (const id of ctx.groups.members("standup") ?? []) await ctx.send({ type: "direct", to: [id], content: "Standup time!" });
   * ```
   */
  members(group: string | number): number[] | undefined;
  /** A group's id, by name (case-insensitive) or id; `undefined` when no such group is known. */
  idOf(group: string | number): number | undefined;
  /** Whether the groups are known: the bot's queue fetched them (it receives `user_group` events). */
  readonly seeded: boolean;
}

export class UserGroups implements GroupMembership {
  readonly #byId = new Map<number, Group>();
  #seeded = false;
  readonly #tracked: (() => boolean) | undefined;

  /** `tracked` says whether the queue receives `user_group` events (and logs how to fix it once). */
  constructor(tracked?: () => boolean) {
    this.#tracked = tracked;
  }

  /** Whether the groups are known (a registration brought them). */
  get seeded(): boolean {
    return this.#seeded;
  }

  /** Replace everything with a registration's `realm_user_groups`. */
  seed(groups: readonly unknown[]): void {
    this.#byId.clear();
    for (const g of groups) if (isGroupRecord(g)) this.#put(g);
    this.#seeded = true;
  }

  /** Apply one `user_group` event; shapes this version does not know are ignored. */
  apply(event: Record<string, unknown>): void {
    const id = typeof event.group_id === "number" ? event.group_id : undefined;
    const group = id === undefined ? undefined : this.#byId.get(id);
    const ids = (key: string): number[] =>
      Array.isArray(event[key])
        ? (event[key] as unknown[]).filter((n): n is number => typeof n === "number")
        : [];
    switch (event.op) {
      case "add":
        if (isGroupRecord(event.group)) this.#put(event.group);
        break;
      case "remove":
        if (id !== undefined) this.#byId.delete(id);
        break;
      case "update": {
        const data = event.data as { name?: unknown; deactivated?: unknown } | undefined;
        if (group && typeof data?.name === "string") group.name = data.name;
        if (group && typeof data?.deactivated === "boolean") group.deactivated = data.deactivated;
        break;
      }
      case "add_members":
        for (const u of ids("user_ids")) group?.members.add(u);
        break;
      case "remove_members":
        for (const u of ids("user_ids")) group?.members.delete(u);
        break;
      case "add_subgroups":
        for (const s of ids("direct_subgroup_ids")) group?.subgroups.add(s);
        break;
      case "remove_subgroups":
        for (const s of ids("direct_subgroup_ids")) group?.subgroups.delete(s);
        break;
    }
  }

  /**
   * A `realm_user` event: a user deactivated is dropped from every group (as the server lists
   * groups since feature level 303); one reactivated is in them again from the next registration.
   */
  deactivated(event: Record<string, unknown>): void {
    const person = event.person as { user_id?: unknown; is_active?: unknown } | undefined;
    if (event.op !== "update" || person?.is_active !== false || typeof person.user_id !== "number") return;
    for (const group of this.#byId.values()) group.members.delete(person.user_id);
  }

  /** The id of a group named `name` (case-insensitive), or of group `id` if it exists. */
  idOf(group: string | number): number | undefined {
    if (typeof group === "number") return this.#byId.has(group) ? group : undefined;
    const lower = group.toLowerCase();
    for (const [id, g] of this.#byId) if (g.name.toLowerCase() === lower) return id;
    return undefined;
  }

  /** A group's name, for messages. */
  nameOf(id: number): string | undefined {
    return this.#byId.get(id)?.name;
  }

  /** Whether `userId` is in `group` (by name or id), directly or through a subgroup. */
  has(group: string | number, userId: number): boolean {
    if (!this.#seeded) this.#tracked?.();
    const id = this.idOf(group);
    return id !== undefined && this.#contains(id, userId, new Set());
  }

  members(group: string | number): number[] | undefined {
    if (!this.#seeded) this.#tracked?.();
    const id = this.idOf(group);
    if (id === undefined) return undefined;
    const out = new Set<number>();
    this.#collect(id, out, new Set());
    return [...out].sort((a, b) => a - b);
  }

  #collect(id: number, out: Set<number>, seen: Set<number>): void {
    const g = this.#byId.get(id);
    if (!g || g.deactivated || seen.has(id)) return;
    seen.add(id);
    for (const m of g.members) out.add(m);
    for (const sub of g.subgroups) this.#collect(sub, out, seen);
  }

  #contains(id: number, userId: number, seen: Set<number>): boolean {
    const g = this.#byId.get(id);
    if (!g || g.deactivated || seen.has(id)) return false;
    seen.add(id);
    if (g.members.has(userId)) return true;
    for (const sub of g.subgroups) if (this.#contains(sub, userId, seen)) return true;
    return false;
  }

  #put(g: GroupRecord): void {
    this.#byId.set(g.id, {
      name: g.name,
      members: new Set(g.members),
      subgroups: new Set(g.direct_subgroup_ids ?? []),
      deactivated: g.deactivated === true,
    });
  }
}

function isGroupRecord(g: unknown): g is GroupRecord {
  const r = g as Partial<GroupRecord> | null;
  return (
    typeof r === "object" &&
    r !== null &&
    typeof r.id === "number" &&
    typeof r.name === "string" &&
    Array.isArray(r.members)
  );
}

/**
 * A check that says, once per name, when a group a permission names (a prompt's `from`, a
 * command's `allow`) is not among the groups the bot fetched: a typo or a renamed group, which
 * nobody can be a member of. Groups not fetched (not tracked) are the tracking warning's case.
 */
export function unknownGroupCheck(): (groups: GroupMembership, group: string | number) => boolean {
  const told = new Set<string>();
  return (groups, group) => {
    const key = String(group).toLowerCase();
    if (!groups.seeded || told.has(key) || groups.idOf(group) !== undefined) return false;
    told.add(key);
    return true;
  };
}
