/**
 * The server's system bots (the Notification Bot, the Welcome Bot, …): cross-realm bots that are
 * in no organization's user list. The framework answers none of their messages by itself (see
 * docs/guide/commands.md#messages-from-bots).
 *
 * A registration that fetched `realm_user` lists them in `cross_realm_bots`; a queue that does
 * not (the users cache is not kept, see `bot.track("users")`) recognises them by the addresses the
 * server gives them by default (`zproject/default_settings.py`), which a server may change.
 */

/** The default addresses of the server's system bots. */
const DEFAULT_EMAILS: ReadonlySet<string> = new Set([
  "notification-bot@zulip.com",
  "welcome-bot@zulip.com",
  "reminder-bot@zulip.com",
  "emailgateway@zulip.com",
  "nagios-send-bot@zulip.com",
  "nagios-receive-bot@zulip.com",
]);

/** The domain of every default address (case aside). */
const AT_ZULIP_COM = /@zulip\.com$/i;

export class SystemBots {
  readonly #ids = new Set<number>();

  /** Learn the `cross_realm_bots` of a registration (absent when it did not fetch `realm_user`). */
  learn(crossRealmBots: readonly unknown[] | undefined): void {
    for (const b of crossRealmBots ?? []) {
      const id = (b as { user_id?: unknown } | null)?.user_id;
      if (typeof id === "number") this.#ids.add(id);
    }
  }

  /** Whether a message's sender (its `sender_id` and `sender_email`) is a system bot. */
  has(id: number, email: string): boolean {
    // Every message is asked about: only an address at zulip.com is lowered and looked up.
    return this.#ids.has(id) || (AT_ZULIP_COM.test(email) && DEFAULT_EMAILS.has(email.toLowerCase()));
  }
}
