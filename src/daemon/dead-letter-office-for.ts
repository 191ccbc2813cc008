/**
 * The dead letters of every bot in a config, as the daemon keeps them and `bothost failed` reads
 * them: each bot's bound from `retries.dead_letters`, the config's secrets redacted from stored
 * errors, and from every letter's error as it is read and shown (for the daemon, hidden from its
 * log lines too, which quote the same errors).
 */
import type { Logger } from "pino";
import type { Config } from "../config/schema.ts";
import { configSecrets, redact } from "../config/secrets.ts";
import { hideInLog } from "../log/create-logger.ts";
import { DeadLetterOffice } from "../state/dead-letter-office.ts";
import type { DeadLettersOptions } from "../state/dead-letters.ts";
import type { StateBackend } from "../state/state-store.ts";
import { type Clock, realClock } from "../time/clock.ts";

/**
 * `clock`: when a retry is asked for (the daemon's clock; `bothost failed` reads the real one).
 * `daemonId`: the daemon holding the office, whose deliveries kept while their run goes on are
 * no failures (see DeadLetterOffice.daemonId); none for `bothost failed` on the store itself.
 */
export function deadLetterOfficeFor(
  config: Config,
  store: StateBackend,
  log?: Logger,
  clock: Pick<Clock, "now"> = realClock,
  daemonId?: string,
): DeadLetterOffice {
  const bots = new Map<string, DeadLettersOptions>();
  // Any bot's, not only its own: a handler may quote what its settings hold (a password in a URL).
  const secrets = configSecrets(config);
  if (log) hideInLog(log, secrets);
  for (const [name, bot] of Object.entries(config.bots)) {
    bots.set(name, {
      max: bot.retries.dead_letters,
      redact: (text) => redact(text, secrets),
      onEvict: (letter) =>
        log?.warn(
          { bot: name, id: letter.id, max: bot.retries.dead_letters },
          "dead letter evicted: the bot keeps at most retries.dead_letters; the oldest was dropped",
        ),
    });
  }
  // An operator's retry or drop is told done once it would outlive a kill of the process.
  const office = new DeadLetterOffice(store, bots, clock, () => store.commit(), daemonId);
  // Hidden as read too: a letter kept before they were hidden when written shows none either.
  office.redact = (text) => redact(text, secrets);
  return office;
}
