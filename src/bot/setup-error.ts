import { BothostError } from "../errors/bothost-error.ts";

/** A bot's `setup` called `bot.*` wrongly; the message names the call and what to fix. */
export class BotSetupError extends BothostError<"BOT_SETUP_INVALID"> {
  override readonly name = "BotSetupError";
  constructor(message: string) {
    super("BOT_SETUP_INVALID", message);
  }
}

/**
 * Several declarations of a bot's `setup` refused: each one, the first (where the setup stopped)
 * first. Its code is the first's; its message names each with its own code.
 */
export class DeclarationsRefused extends BothostError {
  override readonly name = "DeclarationsRefused";
  constructor(readonly refusals: readonly BothostError[]) {
    super(refusals[0]!.code, refusals.map((err) => `${err.message} [${err.code}]`).join(" · "));
  }
}
