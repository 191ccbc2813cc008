/**
 * Which server errors refuse the request itself (a parameter is wrong, a channel does not exist, a
 * snippet is over its size limit): the same request made again gets the same answer, so a handler
 * that made it is not run again (pipeline/handler-failures-refusals.ts). The others are temporary
 * (a 429, a 5xx, no answer at all) and a run again may get through. See
 * docs/operations/failures.md#refused-requests-and-temporary-failures for the list.
 */
import { ApiError, AuthError, RateLimitError } from "./errors.ts";

/** A request the server (or bothost, before sending it) refused as made. */
export interface Refusal {
  /** The error's code: the server's (`STREAM_DOES_NOT_EXIST`, `BAD_REQUEST`…) or bothost's (`SNIPPET_INVALID`). */
  code: string;
  /** The HTTP status the server answered with; undefined when refused before any request. */
  status?: number;
  /** Why, in the server's (or bothost's) words. */
  reason: string;
  /** The request's parameter at fault, when the error names it (`stream`, `title`, `var_name`'s value). */
  parameter?: string;
  /** The value the server quoted for that parameter, if any. */
  value?: string;
}

/** Codes the server answers with when the request itself is wrong: the same request gets the same answer. */
export const REFUSED_CODES: ReadonlySet<string> = new Set([
  "BAD_REQUEST",
  "REQUEST_VARIABLE_MISSING",
  "REQUEST_VARIABLE_INVALID",
  "REQUEST_CONFUSING_VAR",
  "INVALID_JSON",
  "STREAM_DOES_NOT_EXIST",
  "CHANNEL_ALREADY_EXISTS",
  "UNAUTHORIZED_PRINCIPAL",
  "REACTION_ALREADY_EXISTS",
  "REACTION_DOES_NOT_EXIST",
  "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED",
  "TOPIC_WILDCARD_MENTION_NOT_ALLOWED",
  "STREAM_WILDCARD_MENTION_NOT_ALLOWED",
  "BAD_NARROW",
]);

/**
 * Codes on a 4xx that say nothing wrong of the request: an event queue gone (a new one is
 * registered), the rate limit, and a request made from what changed since it was read (a run
 * again reads it anew).
 */
export const TEMPORARY_CODES: ReadonlySet<string> = new Set([
  "BAD_EVENT_QUEUE_ID",
  "RATE_LIMIT_HIT",
  "EXPECTATION_MISMATCH",
]);

/** 4xx statuses that are not the request's fault: the credentials (401), a timeout, "too early", the rate limit. */
const TEMPORARY_STATUSES: ReadonlySet<number> = new Set([401, 408, 425, 429]);

/**
 * A validation error of the server names its parameter first (`title is too long (limit: 60
 * characters)`, `anchor is not an integer`: the server's typed-endpoint error templates).
 */
const NAMED_FIRST = /^([a-z][a-z0-9_]*) (?:is|are|must) /;

/**
 * What refused `err`, if it is the server's refusal of the request as made: an `ApiError` with a
 * code of {@link REFUSED_CODES} and a 4xx status, or any other 4xx but 401, 408, 425 and 429 and
 * the codes of {@link TEMPORARY_CODES}. Undefined for anything else (a 429, a 5xx, a network error,
 * an answer that is not JSON).
 */
export function serverRefusal(err: unknown): Refusal | undefined {
  if (!(err instanceof ApiError) || err instanceof AuthError || err instanceof RateLimitError)
    return undefined;
  const { code, status } = err;
  if (status < 400 || status >= 500 || TEMPORARY_CODES.has(code)) return undefined;
  // A code not listed (a newer server's) is told by its status.
  if (!REFUSED_CODES.has(code) && TEMPORARY_STATUSES.has(status)) return undefined;
  return { code, status, reason: err.msg, ...parameterOf(err) };
}

/** The parameter an error body names (its data's fields, or its message's first word), and its value. */
function parameterOf(err: ApiError): { parameter?: string; value?: string } {
  const data = err.data;
  const text = (value: unknown) =>
    typeof value === "string" || typeof value === "number" ? String(value) : undefined;
  const named = (parameter: string, value: unknown) => {
    const quoted = text(value);
    return quoted === undefined ? { parameter } : { parameter, value: quoted };
  };
  if (typeof data.var_name === "string") return named(data.var_name, data.bad_value);
  if (typeof data.var_name1 === "string" && typeof data.var_name2 === "string")
    return { parameter: `${data.var_name1} or ${data.var_name2}` };
  if (typeof data.field_name === "string") return { parameter: data.field_name };
  if (data.stream_id !== undefined) return named("stream_id", data.stream_id);
  if (data.stream !== undefined) return named("stream", data.stream);
  if (data.channel_name !== undefined) return named("channel_name", data.channel_name);
  const first = NAMED_FIRST.exec(err.msg)?.[1];
  return first === undefined ? {} : { parameter: first };
}
