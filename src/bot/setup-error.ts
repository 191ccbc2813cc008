import { BothostError } from "../errors/bothost-error.ts";

/** A bot's `setup` called `bot.*` wrongly; the message names the call and what to fix. */
export class BotSetupError extends BothostError<"BOT_SETUP_INVALID"> {
  override readonly name = "BotSetupError";
  constructor(message: string) {
    super("BOT_SETUP_INVALID", message);
  }
}
