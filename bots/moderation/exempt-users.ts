/**
 * The users `exempt.users` names (globally and per rule): user ids, and emails. An email matches
 * a sender whose email as the API gives it (`email`: the real address, or `user<id>@<host>` when
 * the organization hides it) or real email (`delivery_email`, when the bot may see it) is that
 * address, case-insensitively; each configured email is also looked up once at start
 * (`ctx.users.get`), so one the server resolves matches by the user's id.
 *
 * A user whose email visibility hides the address from the bot (administrators only: new
 * organizations' default) shows it no real address: such an entry matches nobody. The
 * lookup at start names every entry that matches no user the bot can see in one warning, with
 * what to write instead (the user's id), rather than checking those people silently.
 */
import type { BaseContext, User } from "bothost";
import type { ModerationSettings, RuleOptions } from "./settings.ts";

/** A configured entry and where it is in the settings, e.g. `exempt.users[1]`. */
interface Entry {
  value: string;
  path: string;
}

export interface ExemptUsers {
  /** Look the configured emails up (once; again after a failed try) and warn of those that match nobody. */
  resolve(ctx: BaseContext<ModerationSettings>): Promise<void>;
  /** Whether `list` (a global or rule `exempt.users`) names the sender. */
  names(list: readonly (string | number)[], senderId: number, sender: User | undefined): boolean;
}

const same = (a: string | number, b: string | number | null | undefined) =>
  b !== undefined && b !== null && String(a).toLowerCase() === String(b).toLowerCase();

export function exemptUsers(
  settings: ModerationSettings,
  rules: Partial<Record<string, RuleOptions>>,
): ExemptUsers {
  const emails: Entry[] = [];
  const collect = (list: readonly (string | number)[], path: string) =>
    list.forEach((value, i) => {
      // A number, or digits: a user id, matched as such.
      if (typeof value === "string" && !/^\d+$/.test(value)) emails.push({ value, path: `${path}[${i}]` });
    });
  collect(settings.exempt.users, "exempt.users");
  for (const [name, o] of Object.entries(rules)) {
    if (o?.exempt) collect(o.exempt.users, `rules.${name}.exempt.users`);
  }
  /** Lower-cased configured email → the id of the user the server resolved it to. */
  const ids = new Map<string, number>();
  let resolving: Promise<void> | undefined;

  const lookUp = async (ctx: BaseContext<ModerationSettings>) => {
    const missing: Entry[] = [];
    for (const entry of emails) {
      const user = await ctx.users.get(entry.value);
      if (user) ids.set(entry.value.toLowerCase(), user.user_id);
      else missing.push(entry);
    }
    if (missing.length === 0) return;
    ctx.log.warn(
      { entries: missing.map((e) => `${e.path}: ${e.value}`) },
      `exempt.users: ${missing.map((e) => `${e.value} (${e.path})`).join(", ")} ` +
        `${missing.length === 1 ? "matches" : "match"} no user the bot can see, so their messages are ` +
        "checked. The organization probably hides email addresses from the bot (its email address " +
        "visibility setting); list each such person by user id instead (e.g. `users: [12]`).",
    );
  };

  return {
    resolve(ctx) {
      if (emails.length === 0) return Promise.resolve();
      resolving ??= lookUp(ctx).catch((err: unknown) => {
        resolving = undefined;
        throw err;
      });
      return resolving;
    },
    names(list, senderId, sender) {
      return list.some(
        (x) =>
          same(x, senderId) ||
          (typeof x === "string" &&
            (ids.get(x.toLowerCase()) === senderId ||
              same(x, sender?.email) ||
              same(x, sender?.delivery_email))),
      );
    },
  };
}
