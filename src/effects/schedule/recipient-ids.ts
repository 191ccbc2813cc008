/**
 * The user ids the emails of scheduled messages' recipients named, kept by the bot (a bounded
 * number, each for an hour): a handler booking for the same people each run asks the server once
 * per person, not once per person each run (the user cache keeps a user a minute when the bot does
 * not track `realm_user` events). An email the server does not know is not kept: asked again, it
 * is refused by name again, and found once the user exists.
 */
import type { Client } from "../../api/create-client.ts";
import { type Clock, realClock } from "../../time/clock.ts";
import { clientLookups, type RecipientLookups } from "./resolve-recipient.ts";

/** How many emails are kept: past it, the least recently used goes. */
export const RECIPIENT_IDS_MAX = 1_000;
/** How long an email's id is kept (an email may pass to another account, rarely). */
export const RECIPIENT_IDS_TTL_MS = 3_600_000;

/** `lookups` with each email's user id kept (see the module's comment); the rest as they are. */
export function keptUserIds(
  lookups: RecipientLookups,
  clock: Pick<Clock, "now">,
  max = RECIPIENT_IDS_MAX,
): RecipientLookups {
  const ids = new Map<string, { id: number; at: number }>();
  return {
    ...lookups,
    userId: async (email, signal) => {
      const key = email.toLowerCase();
      const kept = ids.get(key);
      ids.delete(key);
      if (kept !== undefined && clock.now() - kept.at < RECIPIENT_IDS_TTL_MS) {
        ids.set(key, kept); // the most recently used last
        return kept.id;
      }
      const id = await lookups.userId(email, signal);
      if (id === undefined) return undefined;
      ids.set(key, { id, at: clock.now() });
      if (ids.size > max) ids.delete(ids.keys().next().value as string);
      return id;
    },
  };
}

const byClient = new WeakMap<Client, WeakMap<Pick<Clock, "now">, RecipientLookups>>();

/**
 * The client's own lookups (a request each) with each email's user id kept, one set per client
 * and clock: what every scheduling path without the bot's caches (`bot.schedule`, recurring
 * bookings, a context with no bot services) resolves with, so they share one bounded cache.
 */
export function keptClientLookups(client: Client, clock: Pick<Clock, "now"> = realClock): RecipientLookups {
  const perClock = byClient.get(client) ?? new WeakMap<Pick<Clock, "now">, RecipientLookups>();
  byClient.set(client, perClock);
  const lookups = perClock.get(clock) ?? keptUserIds(clientLookups(client), clock);
  perClock.set(clock, lookups);
  return lookups;
}
