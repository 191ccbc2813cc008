import { BothostError } from "../../errors/bothost-error.ts";

/**
 * A recurring schedule that cannot be used: a bad cron expression, an unknown time zone, or (for
 * the job timer) a missing or duplicate job id or an unknown missed-run policy.
 * `field` and `value` say which input is wrong; the message says how to fix it.
 */
export class ScheduleError extends BothostError<"SCHEDULE_INVALID"> {
  readonly field: "id" | "cron" | "timezone" | "missed";
  readonly value: string;

  constructor(field: ScheduleError["field"], value: string, message: string, options?: { cause?: unknown }) {
    super("SCHEDULE_INVALID", message, options);
    this.name = "ScheduleError";
    this.field = field;
    this.value = value;
  }
}
