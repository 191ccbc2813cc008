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

/** Where in the user's own files each refused declaration was made: `bots/hello.ts:12:9`. */
const places = new WeakMap<Error, string>();

/** Notes `place`, the refused call's `file:line:column` in the user's files (none: not theirs). */
export function notePlace(err: Error, place: string | undefined): void {
  if (place !== undefined) places.set(err, place);
}

/**
 * A refused declaration in one line, led by its place when it is in the user's files:
 * `bots/hello.ts:12:9: bot.cron("*\/5 * * *"): expected 5 fields…` (with ` [CODE]` when `withCode`).
 */
export function refusalWords(err: BothostError, withCode = true): string {
  const place = places.get(err);
  return `${place ? `${place}: ` : ""}${err.message}${withCode ? ` [${err.code}]` : ""}`;
}

/** Each refusal's place known, for a log line's `at`. */
export function refusalPlaces(err: unknown): string[] | undefined {
  const list = err instanceof DeclarationsRefused ? err.refusals : err instanceof Error ? [err] : [];
  const known = list.flatMap((e) => places.get(e) ?? []);
  return known.length > 0 ? known : undefined;
}
