/**
 * The dead letters of every bot in a config, as the daemon keeps them and `bothost failed` reads
 * them: each bot's bound from `retries.dead_letters`, its secrets redacted from stored errors.
 */
import type { Logger } from "pino";
import type { Config } from "../config/schema.ts";
import { redact } from "../config/secrets.ts";
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
  for (const [name, bot] of Object.entries(config.bots)) {
    const secrets = [bot.api_key, bot.outgoing_webhook?.token, config.http?.admin_token].filter(
      (s): s is string => s !== undefined,
    );
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
  return new DeadLetterOffice(store, bots, clock, () => store.commit(), daemonId);
}
