/**
 * A schema's complaint (a zod issue) in words for the person who typed the value, a chat user
 * answering a question or running a command: "expected a whole number", not "Invalid input:
 * expected int, received number". Only zod's own wordings are replaced; a message the schema's
 * author wrote (`z.number().min(1, "pick 1 to 9")`) is theirs and kept.
 */

/** The fields of a zod issue read here (zod 4's shapes). */
export interface SchemaIssue {
  code?: string;
  message?: string;
  expected?: string;
  origin?: string;
  minimum?: number | bigint;
  maximum?: number | bigint;
  inclusive?: boolean;
  values?: readonly unknown[];
  format?: string;
}

/** zod's default messages, by the start it gives them. */
const ZOD_WORDING =
  /^(Invalid input: expected |Too small: expected |Too big: expected |Invalid option: expected one of |Invalid (email|url|uuid|date|datetime|time) )/;

const TYPES: Record<string, string> = {
  number: "a number",
  int: "a whole number",
  bigint: "a whole number",
  boolean: "yes or no",
  date: "a date",
  string: "text",
};

const FORMATS: Record<string, string> = {
  email: "an email address",
  url: "a web address (URL)",
  uuid: "a UUID",
  date: "a date (YYYY-MM-DD)",
  datetime: "a date and time",
  time: "a time (HH:MM)",
};

/** `issue` in plain words ("expected at least 1"), or undefined to keep its own message. */
export function issueInWords(issue: SchemaIssue | undefined): string | undefined {
  if (!issue || (issue.message !== undefined && !ZOD_WORDING.test(issue.message))) return undefined;
  switch (issue.code) {
    case "invalid_type":
      return issue.expected && TYPES[issue.expected] ? `expected ${TYPES[issue.expected]}` : undefined;
    case "too_small":
      return bound(issue, issue.minimum, issue.inclusive ? "at least" : "more than");
    case "too_big":
      return bound(issue, issue.maximum, issue.inclusive ? "at most" : "less than");
    case "invalid_value":
      return issue.values?.length ? `expected one of ${issue.values.map(String).join(", ")}` : undefined;
    case "invalid_format":
      return issue.format && FORMATS[issue.format] ? `expected ${FORMATS[issue.format]}` : undefined;
    default:
      return undefined;
  }
}

function bound(issue: SchemaIssue, limit: number | bigint | undefined, words: string): string | undefined {
  if (limit === undefined) return undefined;
  if (issue.origin === "string") return `expected ${words} ${limit} character${limit === 1 ? "" : "s"}`;
  if (issue.origin === "array" || issue.origin === "set")
    return `expected ${words} ${limit} item${limit === 1 ? "" : "s"}`;
  // "int" is zod's safe-integer range of `.int()`, a bound of a number as well.
  return issue.origin === "number" || issue.origin === "int" || issue.origin === "bigint"
    ? `expected ${words} ${limit}`
    : undefined;
}
