import { BothostError } from "../../errors/bothost-error.ts";

/** The codes of {@link ScheduledMessageError}. */
export type ScheduledMessageErrorCode = "SCHEDULE_INVALID" | "SCHEDULE_NOT_FOUND";

/**
 * A one-shot scheduled message (`ctx.schedule`) that cannot be created or changed:
 * `SCHEDULE_INVALID` for bad input (a time not in the future, an unknown channel or user, empty
 * content), `SCHEDULE_NOT_FOUND` for an id the server does not have (delivered, cancelled, or
 * another account's) or a booking `schedule.at` found already sent. `field` names the parameter that is wrong; the message says how to fix it.
 *
 * @example
 * ```ts
 * try { await ctx.schedule.at({ to: "team", topic: "t", content: "hi", at: Date.now() - 1 }); }
 * catch (err) { if (err instanceof ScheduledMessageError && err.field === "at") … }
 * ```
 */
export class ScheduledMessageError extends BothostError<ScheduledMessageErrorCode> {
  override readonly name = "ScheduledMessageError";

  constructor(
    code: ScheduledMessageErrorCode,
    /** The parameter at fault: `to`, `topic`, `content`, `at` or `id`. */
    readonly field: "to" | "topic" | "content" | "at" | "id",
    message: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

/** A `SCHEDULE_INVALID` error for `field`. */
export function scheduleInvalid(
  field: ScheduledMessageError["field"],
  message: string,
  options?: { cause?: unknown },
): ScheduledMessageError {
  return new ScheduledMessageError("SCHEDULE_INVALID", field, message, options);
}
