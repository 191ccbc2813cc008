/**
 * Request bodies as webhook handlers see them: JSON, form fields, or nothing parsed (the raw
 * bytes are always kept, since signatures are computed over them).
 */
import type { Readable } from "node:stream";

/** An error with the HTTP status it should produce (fastify's error handler reads `statusCode`). */
export class HttpStatusError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

/** The answer to a body over `limit` bytes (413), on every webhook path. */
export const tooLargeMessage = (limit: number) => `request body is larger than ${limit} bytes`;

/** The answer to a body declared as JSON that does not parse (400), on every webhook path. */
export const NOT_JSON = "the body is not valid JSON";

/**
 * What fastify's own body parsing (an outgoing-webhook path's: JSON, forms) refused, in the words
 * of the inbound paths: the status and message, or undefined for any other error.
 */
export function unreadableBody(
  err: { code?: string },
  limit: number,
): { status: number; message: string } | undefined {
  switch (err.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return { status: 413, message: tooLargeMessage(limit) };
    // No JSON text is empty.
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return { status: 400, message: NOT_JSON };
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return { status: 415, message: "the body is neither JSON nor a form" };
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return { status: 400, message: "the body's length does not match its Content-Length" };
    default:
      return undefined;
  }
}

/**
 * Read a request stream, refusing (413) once it exceeds `limit` bytes. The stream is left
 * flowing, not destroyed: the listener drains the rest so that the client reads the 413.
 */
export function readBody(stream: Readable, limit: number, declaredLength?: string): Promise<Buffer> {
  const tooLarge = () => new HttpStatusError(413, tooLargeMessage(limit));
  if (declaredLength !== undefined && Number(declaredLength) > limit) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = () => {
      stream.off("data", onData);
      stream.off("end", onEnd);
      stream.off("error", reject);
    };
    const onData = (chunk: Buffer | string) => {
      const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      size += buf.length;
      if (size > limit) {
        settle();
        reject(tooLarge());
      } else chunks.push(buf);
    };
    const onEnd = () => {
      settle();
      resolve(Buffer.concat(chunks));
    };
    stream.on("data", onData);
    stream.once("end", onEnd);
    stream.once("error", reject);
  });
}

/** A form body as an object; repeated fields become arrays. */
export function parseForm(text: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null);
  for (const [k, v] of new URLSearchParams(text)) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return { ...out };
}

/**
 * JSON.parse without the keys that could reach a prototype once the value is copied or merged:
 * `__proto__`, and a `constructor` holding a `prototype`. They are dropped, as fastify's
 * `onProtoPoisoning`/`onConstructorPoisoning: "remove"` drop them from the bodies it parses, so that
 * every JSON body bothost reads is read alike.
 */
export function parseJsonSafely(text: string): unknown {
  return JSON.parse(text, (key, value: unknown) => {
    if (key === "__proto__") return undefined;
    if (
      key === "constructor" &&
      typeof value === "object" &&
      value !== null &&
      Object.hasOwn(value, "prototype")
    )
      return undefined;
    return value;
  });
}

/**
 * Parse by content type: JSON (`application/json`, `…+json`) or form fields (an empty form has
 * none: `{}`); undefined for any other type. Throws a 400 for JSON that does not parse, an
 * empty body declared as JSON included (no JSON text is empty).
 */
export function parseBody(raw: Buffer, contentType: string | undefined): unknown {
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  if (type === "application/json" || type.endsWith("+json")) {
    try {
      return parseJsonSafely(raw.toString("utf8"));
    } catch {
      throw new HttpStatusError(400, NOT_JSON);
    }
  }
  if (type === "application/x-www-form-urlencoded") return parseForm(raw.toString("utf8"));
  return undefined;
}
