/**
 * Client-side checks for `POST /messages/{message_id}/report` (seed; NOTES §11), so a bad
 * report fails here with a clear message instead of as a bare 400 from the server.
 */
import { BothostError } from "../../errors/bothost-error.ts";
import { serverDefaults } from "../../wire/responses.ts";
import { codePointLength, truncateCodePoints } from "../limits/code-points.ts";

/** Clients limit report descriptions to this many Unicode code points. */
export const MAX_REPORT_DESCRIPTION_LENGTH = 1000;

/** One entry of the register response's `server_report_message_types`. */
export interface ReportTypeOption {
  key: string;
  name?: string;
}

/** Same as {@link ReportTypeOption} (the name the message reporter imports). */
export type ReportTypeInfo = ReportTypeOption;

export interface ReportInput {
  /** A key of `server_report_message_types`, e.g. `"spam"` or `"other"`. */
  type: string;
  /** Required for `"other"`. */
  description?: string;
}

/** The request parameters to send (wire names), plus whether the description was cut. */
export interface ValidatedReport {
  report_type: string;
  /** The description to send (cut to 1000 code points), or `undefined` to send none. */
  description: string | undefined;
  /** Whether the description was cut (it then ends in "…"). */
  truncated: boolean;
}

/** A report the server would refuse: an unknown type, or "other" without a description. */
export class ReportError extends BothostError<"REPORT_INVALID"> {
  readonly field: "type" | "description";

  constructor(field: "type" | "description", message: string) {
    super("REPORT_INVALID", message);
    this.name = "ReportError";
    this.field = field;
  }
}

/**
 * Checks a report against the server's report types and returns the parameters to send. Throws
 * {@link ReportError} (`REPORT_INVALID`). Without `serverReportTypes` (servers before FL 435 do
 * not send them) the original five types are assumed. Also callable as
 * `validateReport(type, description, serverReportTypes)`.
 *
 * @example
 * ```ts
 * const report = validateReport({ type: "spam", description: text }, register.server_report_message_types);
 * if (report.truncated) log.info("report description cut to 1000 characters");
 * await client.messages.report(id, { report_type: report.report_type, description: report.description });
 * ```
 */
export function validateReport(
  input: ReportInput,
  serverReportTypes?: readonly ReportTypeOption[],
): ValidatedReport;
export function validateReport(
  type: string,
  description: string | undefined,
  serverReportTypes?: readonly ReportTypeOption[],
): ValidatedReport;
export function validateReport(
  first: ReportInput | string,
  second?: readonly ReportTypeOption[] | string,
  third?: readonly ReportTypeOption[],
): ValidatedReport {
  const input: ReportInput =
    typeof first === "string" ? { type: first, description: second as string | undefined } : first;
  const types =
    (typeof first === "string" ? third : (second as readonly ReportTypeOption[] | undefined)) ??
    DEFAULT_TYPES;
  return check(input, types);
}

const DEFAULT_TYPES: readonly ReportTypeOption[] = serverDefaults.server_report_message_types;

function check(input: ReportInput, serverReportTypes: readonly ReportTypeOption[]): ValidatedReport {
  const keys = serverReportTypes.map((t) => t.key);
  if (!keys.includes(input.type)) {
    throw new ReportError(
      "type",
      `Report type "${input.type}" is not offered by this server; use one of: ${keys.join(", ")}.`,
    );
  }
  const description = input.description ?? "";
  if (input.type === "other" && description.trim() === "") {
    throw new ReportError(
      "description",
      'Report type "other" needs a description of what is wrong; pass a non-empty description.',
    );
  }
  const report_type = input.type;
  if (description === "") return { report_type, description: undefined, truncated: false };
  if (codePointLength(description) <= MAX_REPORT_DESCRIPTION_LENGTH) {
    return { report_type, description, truncated: false };
  }
  const cut = truncateCodePoints(description, MAX_REPORT_DESCRIPTION_LENGTH, "…");
  return { report_type, description: cut.text, truncated: true };
}
