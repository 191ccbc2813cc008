/**
 * Authenticating an inbound webhook request, one scheme per `WebhookVerify` type. Every secret is
 * compared in constant time; a failure says which header was wrong, never what it held.
 */
import { createHmac } from "node:crypto";
import { safeEqual } from "./constant-time.ts";
import type { WebhookVerify } from "./webhook-runtime.ts";

export type Headers = Readonly<Record<string, string | string[] | undefined>>;

/** Accepted, with an implicit idempotency key for signed requests; or refused with the reason. */
export type Verdict = { ok: true; replayKey?: string } | { ok: false; reason: string };

/** Default header names and replay tolerance of each scheme (docs/guide/webhooks.md, "Verifiers"). */
export const verifyDefaults = {
  githubHeader: "x-hub-signature-256",
  hmacHeader: "x-signature",
  secretHeader: "x-webhook-secret",
  slackHeader: "x-slack-signature",
  slackTimestampHeader: "x-slack-request-timestamp",
  toleranceSeconds: 300,
} as const;

function header(headers: Headers, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

function hmacHex(secret: string, ...parts: (string | Buffer)[]): string {
  const h = createHmac("sha256", secret);
  for (const p of parts) h.update(p);
  return h.digest("hex");
}

/** Check `headers` and `rawBody` against `verify`. `nowSeconds` is injectable for tests. */
export function verifyRequest(
  verify: WebhookVerify,
  headers: Headers,
  rawBody: Buffer,
  nowSeconds: number,
): Verdict {
  switch (verify.type) {
    case "none":
      return { ok: true };
    case "bearer": {
      const auth = header(headers, "authorization");
      const match = auth ? /^Bearer[ ]+(\S+)\s*$/i.exec(auth) : null;
      if (!match) return { ok: false, reason: "missing Authorization: Bearer header" };
      return safeEqual(match[1]!, verify.token) ? { ok: true } : { ok: false, reason: "wrong bearer token" };
    }
    case "secret": {
      const name = verify.header ?? verifyDefaults.secretHeader;
      const given = header(headers, name);
      if (given === undefined) return { ok: false, reason: `missing ${name} header` };
      return safeEqual(given, verify.secret) ? { ok: true } : { ok: false, reason: `wrong ${name} header` };
    }
    case "github": {
      const digest = prefixedDigest(headers, verifyDefaults.githubHeader, "sha256=");
      if (!digest.ok) return digest;
      return matches(digest.hex, hmacHex(verify.secret, rawBody)) ? { ok: true } : digest.wrong;
    }
    case "hmac":
      return verifyTimestamped(verify, headers, rawBody, nowSeconds);
    case "slack":
      return verifySlack(verify, headers, rawBody, nowSeconds);
  }
}

/** How long a signed request of `verify` is accepted either side of its timestamp, in seconds. */
export function toleranceOf(verify: WebhookVerify): number {
  const own = verify.type === "hmac" || verify.type === "slack" ? verify.toleranceSeconds : undefined;
  return own ?? verifyDefaults.toleranceSeconds;
}

type Refusal = Extract<Verdict, { ok: false }>;

/**
 * The hex digest of a `<prefix><hex>` header `name` (GitHub's `sha256=`, Slack's `v0=`), or why
 * it is refused, in the sender's own terms (its length or its characters, never the value: the
 * length of a SHA-256 digest is no secret). `wrong`: the refusal of a digest that does not match.
 */
function prefixedDigest(
  headers: Headers,
  name: string,
  prefix: string,
): { ok: true; hex: string; wrong: Refusal } | Refusal {
  const given = header(headers, name);
  if (given === undefined) return { ok: false, reason: `missing ${name} header` };
  const trimmed = given.trim();
  const want = `(want ${prefix}<64 hex digits>)`;
  const refuse = (problem: string): Refusal => ({ ok: false, reason: `${name} ${problem} ${want}` });
  if (!trimmed.startsWith(prefix)) return refuse(`does not begin with ${prefix}`);
  const hex = trimmed.slice(prefix.length);
  if (!/^[0-9a-fA-F]*$/.test(hex)) return refuse(`is not hexadecimal after ${prefix}`);
  if (hex.length !== 64) return refuse(`has ${hex.length} hex digits after ${prefix}, not 64`);
  return { ok: true, hex, wrong: { ok: false, reason: `${name} does not match the body` } };
}

/** A hex digest `given` (any case) against the `expected` lower-case one, in constant time. */
function matches(given: string, expected: string): boolean {
  return safeEqual(given.toLowerCase(), expected);
}

/**
 * Why the `timestamp` read from `where` is refused: missing, not whole unix seconds, or outside
 * `tolerance` seconds of `nowSeconds` either way; undefined when it is within.
 */
function timestampProblem(
  timestamp: string | undefined,
  where: string,
  tolerance: number,
  nowSeconds: number,
): string | undefined {
  if (!timestamp) return `missing timestamp in ${where}`;
  if (!/^\d{1,12}$/.test(timestamp)) {
    // The value is not said: it is part of a header, and headers are never logged.
    const ms = /^\d{13,}$/.test(timestamp) ? " (milliseconds?)" : "";
    return `timestamp in ${where} is not whole unix seconds${ms}`;
  }
  if (Math.abs(nowSeconds - Number(timestamp)) > tolerance)
    return `timestamp in ${where} is outside the ${tolerance} s window`;
  return undefined;
}

/** A valid signature names this exact request: it doubles as an idempotency key in the window. */
const replayKey = (expected: string) => `sig:${expected}`;

/**
 * Slack's request signing: `X-Slack-Request-Timestamp: <unix seconds>` and
 * `X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:<timestamp>:<raw body>">`.
 */
function verifySlack(
  verify: Extract<WebhookVerify, { type: "slack" }>,
  headers: Headers,
  rawBody: Buffer,
  nowSeconds: number,
): Verdict {
  const where = verifyDefaults.slackTimestampHeader;
  const timestamp = header(headers, where);
  if (timestamp === undefined) return { ok: false, reason: `missing ${where} header` };
  const late = timestampProblem(timestamp, where, toleranceOf(verify), nowSeconds);
  if (late) return { ok: false, reason: late };
  const digest = prefixedDigest(headers, verifyDefaults.slackHeader, "v0=");
  if (!digest.ok) return digest;
  const expected = hmacHex(verify.secret, `v0:${timestamp}:`, rawBody);
  return matches(digest.hex, expected) ? { ok: true, replayKey: replayKey(expected) } : digest.wrong;
}

/**
 * `X-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` (several `v1` allowed, for
 * key rotation). With `timestampHeader`, the timestamp comes from that header instead and the
 * signature header holds the hex digest (optionally as `v1=<hex>` or `sha256=<hex>`).
 */
function verifyTimestamped(
  verify: Extract<WebhookVerify, { type: "hmac" }>,
  headers: Headers,
  rawBody: Buffer,
  nowSeconds: number,
): Verdict {
  const name = verify.header ?? verifyDefaults.hmacHeader;
  const given = header(headers, name);
  if (!given) return { ok: false, reason: `missing ${name} header` };
  let timestamp: string | undefined;
  const signatures: string[] = [];
  if (verify.timestampHeader) {
    timestamp = header(headers, verify.timestampHeader);
    signatures.push(given.trim().replace(/^(v1|sha256)=/, ""));
  } else {
    for (const part of given.split(",")) {
      const [k, v] = part.trim().split("=", 2) as [string, string | undefined];
      if (k === "t") timestamp = v;
      else if (k === "v1" && v) signatures.push(v);
    }
  }
  const where = verify.timestampHeader ?? `${name} (t=…)`;
  const late = timestampProblem(timestamp, where, toleranceOf(verify), nowSeconds);
  if (late) return { ok: false, reason: late };
  if (signatures.length === 0) return { ok: false, reason: `missing v1=<hex> signature in ${name}` };
  const expected = hmacHex(verify.secret, `${timestamp}.`, rawBody);
  // Check every candidate (no early exit) so timing does not tell which one matched.
  let matched = false;
  for (const sig of signatures) matched = matches(sig, expected) || matched;
  return matched
    ? { ok: true, replayKey: replayKey(expected) }
    : { ok: false, reason: `${name} does not match the body` };
}
