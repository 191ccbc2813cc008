/**
 * `ctx.users`: user lookups by id, real email or placeholder email (`user{id}@{realm host}`),
 * cached per bot from first use. The cache stays fresh from `realm_user` events when the queue
 * receives them (`bot.track("users")`); otherwise entries are re-fetched after a minute.
 */
import { ApiError } from "../../api/errors.ts";
import type { UsersApi } from "../../api/resources/users.ts";
import type { Clock } from "../../time/clock.ts";
import type { EventMap } from "../../wire/events.ts";
import type { User } from "../../wire/records.ts";

export type { User };

/**
 * `ctx.users`: the organization's users, cached and kept fresh from events.
 *
 * @example
 * ```ts
 * const sender = await ctx.users.get(ctx.event.message.sender_id);
 * if (sender && !sender.is_bot && Date.parse(sender.date_joined) > Date.now() - 7 * 86_400_000) { … }
 * const alice = await ctx.users.get("alice@example.org"); // real email (if visible) or user12@host
 * ```
 */
export interface Users {
  /** A user by id, real email or placeholder email; `undefined` when the server knows no such user. */
  get(user: number | string): Promise<User | undefined>;
  /** Every user of the organization the bot can see (deactivated ones included, `is_active: false`). */
  list(): Promise<User[]>;
}

export interface UserCacheOptions {
  api: Pick<UsersApi, "get" | "list">;
  /** Whether the bot's queue receives `realm_user` events (the first "no" is logged). */
  tracked: () => boolean;
  /** The realm's host (from `realm_url`), to recognise placeholder emails without a request. */
  realmHost: () => string | undefined;
  clock: Clock;
}

interface Entry {
  user: User;
  fetchedAt: number;
}

const PLACEHOLDER = /^user(\d+)@(.+)$/i;

export class UserCache implements Users {
  readonly #byId = new Map<number, Entry>();
  /** Lower-cased real and API emails of cached users, so a lookup by email is one map read. */
  readonly #idByEmail = new Map<string, number>();
  readonly #inFlight = new Map<string, Promise<User | undefined>>();
  /** Hosts of placeholder emails seen on users (`user{id}@host` where id is the user's own). */
  readonly #placeholderHosts = new Set<string>();
  #listedAt: number | undefined;
  #used = false;

  constructor(private readonly o: UserCacheOptions) {}

  /** Apply one `realm_user` event (ignored until the cache is first used). */
  apply(event: EventMap["realm_user"]): void {
    if (!this.#used) return;
    const person = event.person as Record<string, unknown> & { user_id: number };
    if (event.op === "remove") {
      this.#forget(person.user_id);
      return;
    }
    const cached = this.#byId.get(person.user_id)?.user;
    if (event.op === "add") this.#store({ is_active: true, ...person } as unknown as User);
    else if (cached) this.#store(applyPersonUpdate(cached, person));
  }

  /**
   * Replace the cache with a registration's `realm_users` (every active user the bot can see),
   * so lookups and permission checks need no request until the next registration.
   */
  seed(users: readonly unknown[], inactive: readonly unknown[] = []): void {
    this.#used = true;
    this.invalidate();
    const store = (u: unknown, active: boolean) => {
      const user = u as Partial<User> | null;
      if (typeof user?.user_id === "number") this.#store({ ...user, is_active: active } as User);
    };
    for (const u of users) store(u, true);
    for (const u of inactive) store(u, false);
    this.#listedAt = this.o.clock.now();
  }

  /** The cached user with this id, without asking the server (`undefined` when not cached). */
  peek(id: number): User | undefined {
    return this.#byId.get(id)?.user;
  }

  /** Events may have been missed (a new queue): forget everything. */
  invalidate(): void {
    this.#byId.clear();
    this.#idByEmail.clear();
    this.#listedAt = undefined;
  }

  async get(user: number | string): Promise<User | undefined> {
    this.#used = true;
    const id = typeof user === "number" ? user : this.#idOf(user);
    const cached = id === undefined ? undefined : this.#byId.get(id);
    if (cached && this.#fresh(cached.fetchedAt)) return cached.user;
    const key = id !== undefined ? `id:${id}` : `email:${String(user).toLowerCase()}`;
    let pending = this.#inFlight.get(key);
    if (!pending) {
      pending = this.#fetch(id ?? String(user)).finally(() => this.#inFlight.delete(key));
      this.#inFlight.set(key, pending);
    }
    return pending;
  }

  async list(): Promise<User[]> {
    this.#used = true;
    if (this.#listedAt === undefined || !this.#fresh(this.#listedAt)) {
      const { members } = await this.o.api.list();
      this.invalidate();
      for (const u of members) this.#store(u);
      this.#listedAt = this.o.clock.now();
    }
    return [...this.#byId.values()].map((e) => e.user).sort((a, b) => a.user_id - b.user_id);
  }

  #fresh(at: number): boolean {
    return this.o.tracked() || this.o.clock.now() - at < 60_000;
  }

  /** The id an email names, if known without asking: a cached user's email, or a placeholder of this realm. */
  #idOf(email: string): number | undefined {
    const known = this.#idByEmail.get(email.toLowerCase());
    if (known !== undefined) return known;
    const placeholder = PLACEHOLDER.exec(email);
    const host = placeholder?.[2]?.toLowerCase();
    if (
      host !== undefined &&
      (this.#placeholderHosts.has(host) || host === this.o.realmHost()?.toLowerCase())
    ) {
      return Number(placeholder![1]);
    }
    return undefined;
  }

  async #fetch(user: number | string): Promise<User | undefined> {
    try {
      const { user: found } = await this.o.api.get(user);
      this.#store(found);
      // The server resolved a placeholder: later ones of this host need no request.
      if (typeof user === "string") this.#notePlaceholder(user, found.user_id);
      return found;
    } catch (err) {
      // The server's answer for an unknown id or an email the bot may not see.
      if (err instanceof ApiError && err.status === 400 && /no such user/i.test(err.msg)) return undefined;
      throw err;
    }
  }

  #store(user: User): void {
    this.#forget(user.user_id);
    this.#byId.set(user.user_id, { user, fetchedAt: this.o.clock.now() });
    for (const email of [user.email, user.delivery_email]) {
      if (typeof email === "string" && email !== "") this.#idByEmail.set(email.toLowerCase(), user.user_id);
    }
    this.#notePlaceholder(user.email, user.user_id);
  }

  #notePlaceholder(email: string, id: number): void {
    const placeholder = PLACEHOLDER.exec(email);
    if (placeholder && Number(placeholder[1]) === id)
      this.#placeholderHosts.add(placeholder[2]!.toLowerCase());
  }

  /** Drop a user and the emails that pointed at it. */
  #forget(id: number): void {
    const old = this.#byId.get(id)?.user;
    this.#byId.delete(id);
    if (!old) return;
    for (const email of [old.email, old.delivery_email]) {
      if (typeof email === "string" && this.#idByEmail.get(email.toLowerCase()) === id) {
        this.#idByEmail.delete(email.toLowerCase());
      }
    }
  }
}

/** Roles: 100 owner, 200 administrator, 300 moderator, 400 member, 600 guest. */
type Role = User["role"];

/**
 * The user after a `realm_user` `update` event's `person` (NOTES §4.8), as a new object. Each
 * event carries `user_id` and one changed field group; the few whose name differs from the user
 * record's field are translated, the rest are copied as they are.
 */
export function applyPersonUpdate(user: User, person: Record<string, unknown>): User {
  const next: Record<string, unknown> = { ...user };
  for (const [key, value] of Object.entries(person)) {
    switch (key) {
      case "user_id":
        break;
      case "new_email":
        if (typeof value === "string") next.email = value;
        break;
      case "role":
        if (typeof value === "number") Object.assign(next, roleFields(value as Role));
        break;
      case "custom_profile_field":
        next.profile_data = withProfileField(user.profile_data, value);
        break;
      default:
        next[key] = value;
    }
  }
  return next as User;
}

/** The role and the booleans derived from it, as the user record has them. */
function roleFields(role: Role): Pick<User, "role" | "is_owner" | "is_admin" | "is_guest"> {
  return { role, is_owner: role === 100, is_admin: role <= 200, is_guest: role === 600 };
}

function withProfileField(data: User["profile_data"], change: unknown): User["profile_data"] {
  if (typeof change !== "object" || change === null) return data;
  const { id, value, rendered_value } = change as { id?: unknown; value?: unknown; rendered_value?: unknown };
  if (typeof id !== "number") return data;
  const next = { ...data };
  if (typeof value !== "string") delete next[String(id)];
  else next[String(id)] = { value, ...(typeof rendered_value === "string" ? { rendered_value } : {}) };
  return next;
}
