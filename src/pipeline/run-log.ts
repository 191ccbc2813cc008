/**
 * The log of a handler's run. A dialog's run replays its log from the handler's start: what the
 * handler logs through `ctx.log` before it is past the steps its record holds was logged when
 * those steps ran, so a replay does not log it again. What the pipeline says of the run (its
 * failure, its end) goes to the run's own logger, never quiet: {@link runLog}; a `bot.catch`
 * logs through `ctx.log` again ({@link loudAfterError}).
 */
import type { Logger } from "pino";
import type { BotContext } from "./context.ts";
import type { Turn } from "./dialogs/turn.ts";

/** The run's own logger, by context, where the handler's is a quiet child of it. */
const RUN_LOGS = new WeakMap<object, Logger>();

/** `ctx`, a dialog's replay: its handler's `ctx.log` logs nothing until `turn` is past its record. */
export function quietWhileReplaying(ctx: BotContext<unknown>, turn: Turn): void {
  const log = ctx.log;
  const quiet = log.child({}, { level: "silent" });
  RUN_LOGS.set(ctx, log);
  ctx.log = quiet;
  turn.onLive = () => {
    quiet.level = log.level;
  };
}

/**
 * `ctx`'s handler failed: its `ctx.log` logs again, so that what a `bot.catch` says of an error
 * thrown during a replay is logged (the error itself is new, whatever step the run was at).
 */
export function loudAfterError(ctx: BotContext<unknown>): void {
  const log = RUN_LOGS.get(ctx);
  if (log !== undefined) ctx.log.level = log.level;
}

/** The logger the pipeline says what became of `ctx`'s run with. */
export function runLog(ctx: BotContext<unknown>): Logger {
  return RUN_LOGS.get(ctx) ?? ctx.log;
}
