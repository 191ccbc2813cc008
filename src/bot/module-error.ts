import type { ConfigProblem } from "../config/config-problem.ts";
import type { ConfigSource } from "../config/config-source.ts";
import { BothostError } from "../errors/bothost-error.ts";

/**
 * `MODULE_NOT_FOUND`: no file or package by that name.
 * `MODULE_LOAD_FAILED`: it exists but could not be loaded (syntax error, missing import, threw).
 * `MODULE_INVALID`: it loaded but does not export a bot (no `setup`, bad `events` or `settings`).
 */
export type ModuleErrorCode = "MODULE_NOT_FOUND" | "MODULE_LOAD_FAILED" | "MODULE_INVALID";

/**
 * A bot module that cannot be used. The message names the bot, the module as written in the
 * config, and what to fix (`bot "echo": module ./bots/echo.ts has no setup function: …`); a load
 * failure keeps the module's own error as `cause`.
 */
export class ModuleError extends BothostError<ModuleErrorCode> {
  /** The bot whose module this is, when known. */
  readonly botName: string | undefined;
  /** The module as written in the config. */
  readonly specifier: string;
  /** The file it resolved to, when it was found. */
  readonly resolvedPath: string | undefined;
  override readonly name = "ModuleError";

  constructor(
    code: ModuleErrorCode,
    details: { botName?: string | undefined; specifier: string; resolvedPath?: string | undefined },
    /** What is wrong and how to fix it, without the bot and module names. */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    const who = details.botName === undefined ? "" : `bot "${details.botName}": `;
    super(code, `${who}module ${details.specifier} ${reason}`, options);
    this.botName = details.botName;
    this.specifier = details.specifier;
    this.resolvedPath = details.resolvedPath;
  }
}

/** True for a {@link ModuleError}. */
export function isModuleError(err: unknown): err is ModuleError {
  return err instanceof ModuleError;
}

/** A bot's module that did not load, located at its `module:`. */
export function moduleProblem(
  source: ConfigSource,
  name: string,
  module: string,
  err: ModuleError,
): ConfigProblem {
  return source.problem(["bots", name, "module"], `${module} ${err.reason} (${err.code})`);
}
