/**
 * A reload's new bot versions, set up before any old one stops. A bot that restarts on the same
 * server and account gets its new runtime's real `setup` (its state was checked against that
 * server when the old version started); an added bot, one moved to another server or account, or
 * one another instance runs (cluster standby), is tried offline (its state is checked against the
 * server only when it starts here). If any setup throws, the reload is refused: the runtimes made
 * for it are discarded and every bot keeps running as it was. So it is when a setup outlasts the
 * bot's `handler_timeout`, or the daemon stops meanwhile, or when the server rejects the new
 * credentials of a bot whose server, email or key changed (one `GET /users/me`): the running
 * version keeps its old ones instead of stopping for good.
 */
import type { BotConfig, Config } from "../config/schema.ts";
import { configSecrets, redact } from "../config/secrets.ts";
import { BothostError } from "../errors/bothost-error.ts";
import type { Clock } from "../time/clock.ts";
import type { BotRuntime } from "./bot-runtime.ts";
import type { DaemonBot } from "./daemon-bot.ts";
import { runSetupOffline, type SetupProblem, setupProblem, undeclaredWebhook } from "./trial-setup.ts";

export interface NewVersions {
  /** The bots to start, as loaded from the new config. */
  bots: readonly DaemonBot[];
  before: Config;
  after: Config;
  /** Bots another instance runs (a cluster): tried offline, as this one does not hold their state. */
  standby: ReadonlySet<string>;
  /** A runtime for `bot` under the new config (not started). */
  make: (bot: DaemonBot) => BotRuntime;
  /** Aborted when the daemon stops: every setup still running is given up (the reload refused). */
  signal?: AbortSignal;
  /** The daemon's clock: an offline trial's `handler_timeout` passes on it (default real). */
  clock?: Clock;
}

/**
 * The runtimes already set up, by bot (those tried offline are made at start as usual).
 * @throws {BothostError} `RELOAD_REFUSED`, one line per bot whose setup failed.
 */
export async function setUpNewVersions(o: NewVersions): Promise<Map<string, BotRuntime>> {
  const made = new Map<string, BotRuntime>();
  const problems: SetupProblem[] = [];
  for (const bot of o.bots) {
    const old = o.before.bots[bot.name];
    const entry = o.after.bots[bot.name]!;
    const trial = { name: bot.name, module: entry.module };
    const sameServer = old?.server.url === entry.server.url && old?.email === entry.email;
    if (old && sameServer && !o.standby.has(bot.name)) {
      const runtime = o.make(bot);
      made.set(bot.name, runtime);
      await runtime.setup(o.signal).catch((err: unknown) => problems.push(setupProblem(trial, err)));
    } else {
      const ran = await runSetupOffline({
        ...bot,
        ...trial,
        commandPrefix: entry.command_prefix,
        timeoutMs: entry.handler_timeout,
        clock: o.clock,
        signal: o.signal,
      });
      // As the start would refuse it: a `webhooks.<name>` of its config that setup declared no webhook by.
      const configured = new Map(
        Object.keys(entry.webhooks ?? {}).map((n) => [n, bot.webhookPlaces?.get(n)]),
      );
      const undeclared = ran.handle && undeclaredWebhook(bot.name, configured, ran.handle.webhooks);
      if (ran.problem) problems.push(ran.problem);
      else if (undeclared) problems.push(setupProblem(trial, undeclared));
    }
    // A bot whose setup already failed refuses the reload anyway: no call is needed for it.
    const failed = problems.some((p) => p.bot === bot.name);
    if (old && !failed && !o.standby.has(bot.name) && credentialsChanged(old, entry)) {
      const runtime = made.get(bot.name) ?? o.make(bot);
      made.set(bot.name, runtime);
      const rejected = await runtime.credentialsRejected(o.signal);
      if (rejected) {
        const line = `bots.${bot.name} (${entry.module}): ${rejected.message} The running version keeps its old credentials.`;
        problems.push({ bot: bot.name, module: entry.module, line, declaration: false });
      }
    }
  }
  if (problems.length === 0 && !o.signal?.aborted) return made;
  // Never started: stopping releases what the runtimes hold (their services, timers).
  await Promise.all([...made.values()].map((r) => r.stop(0)));
  // A setup's error may quote a secret of the config (a password from its settings in a URL).
  const secrets = configSecrets(o.after);
  const why = problems.map((p) => redact(p.line, secrets)).join("\n") || "the daemon is stopping";
  throw new BothostError("RELOAD_REFUSED", why);
}

/** The server, account or key a bot's client uses differ between two config entries. */
function credentialsChanged(before: BotConfig, after: BotConfig): boolean {
  const of = (c: BotConfig) => JSON.stringify([c.server, c.email, c.api_key]);
  return of(before) !== of(after);
}
