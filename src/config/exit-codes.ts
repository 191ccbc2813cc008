import { isBothostError } from "../errors/bothost-error.ts";

/** The exit codes of the daemon and CLI, one per kind of outcome: scripts rely on these numbers. */
export const ExitCode = {
  /** Everything went as asked (including a clean shutdown on SIGTERM). */
  Ok: 0,
  /** A runtime failure after start: the daemon could not go on (e.g. the state store failed). */
  RuntimeFailure: 1,
  /**
   * The config file, a bot module, its settings, the embedded sandbox's org file
   * (`SANDBOX_ORG_INVALID`) or a command-line option is invalid (`CONFIG_*`, `MODULE_*`), the
   * state belongs to another server than the config's (`STATE_SERVER_MISMATCH`), or the config
   * puts the bot `bothost backtest` names on the embedded sandbox, whose history no other process
   * can read; or the Node.js running the CLI is one bothost does not support (cli/node-check.ts).
   */
  ConfigInvalid: 2,
  /** Authentication failed for every bot (wrong email or API key, deactivated accounts). */
  AuthFailed: 3,
  /** An unknown CLI command (64 is EX_USAGE in BSD sysexits.h). */
  UnknownCommand: 64,
  /**
   * Nothing was done, and the same command may succeed in a moment: `bothost dialogs end` on a
   * dialog whose first question is not recorded yet (75 is EX_TEMPFAIL in BSD sysexits.h).
   */
  TryAgain: 75,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * The exit code for an error that stopped the process: 2 for config and module errors, for an
 * org file the config's `server.sandbox.org` names that is invalid (a file the user wrote, as
 * `bothost sandbox --org` reports it), for state that belongs to another server (the config
 * and the state disagree) and for a bot name the config does not have, else 1.
 */
export function exitCodeFor(err: unknown): ExitCode {
  // The running daemon's refusal carries its own error as the cause.
  const own =
    isBothostError(err) && err.code === "DAEMON_REFUSED" && isBothostError(err.cause) ? err.cause : err;
  if (isBothostError(own) && USER_MISTAKE.test(own.code)) return ExitCode.ConfigInvalid;
  return ExitCode.RuntimeFailure;
}

/** The codes of the user's own mistakes: a bot name the config does not have (`UNKNOWN_BOT`) too. */
const USER_MISTAKE = /^(CONFIG_|MODULE_|STATE_SERVER_MISMATCH$|SANDBOX_ORG_INVALID$|UNKNOWN_BOT$)/;
