/**
 * A bot as the daemon receives it: its loaded module's definition and its validated settings.
 */
import type { BotDefinition } from "../bot/define-bot.ts";

/** One configured bot, loaded and checked, ready for the daemon to run. */
export interface DaemonBot {
  name: string;
  definition: BotDefinition<never, never>;
  settings: unknown;
  /** The module's fingerprint (see `moduleFingerprint`), for reloads. */
  fingerprint?: string;
  /** Where each of the config's `webhooks.<name>` keys is (`bothost.yaml:14:7`), by name. */
  webhookPlaces?: ReadonlyMap<string, string>;
}
