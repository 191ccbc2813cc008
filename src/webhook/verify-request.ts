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
      const name = verifyDefaults.githubHeader;
      const given = header(headers, name);
      if (given === undefined) return { ok: false, reason: `missing ${name} header` };
      const digest = /^sha256=(.*)$/s.exec(given.trim())?.[1];
      const problem = githubDigestProblem(digest);
      if (problem) return { ok: false, reason: `${name} ${problem} (want sha256=<64 hex digits>)` };
      const expected = hmacHex(verify.secret, rawBody);
      return safeEqual(digest!.toLowerCase(), expected)
        ? { ok: true }
        : { ok: false, reason: `${name} does not match the body` };
    }
    case "hmac":
      return verifyTimestamped(verify, headers, rawBody, nowSeconds);
  }
}

/**
 * What is wrong with the digest of a `sha256=<hex>` header, in the sender's own terms (its length
 * or its characters, never the value): the length of a SHA-256 digest is no secret.
 */
function githubDigestProblem(digest: string | undefined): string | undefined {
  if (digest === undefined) return "does not begin with sha256=";
  if (!/^[0-9a-fA-F]*$/.test(digest)) return "is not hexadecimal after sha256=";
  if (digest.length !== 64) return `has ${digest.length} hex digits after sha256=, not 64`;
  return undefined;
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
  if (!timestamp) return { ok: false, reason: `missing timestamp in ${where}` };
  if (!/^\d{1,12}$/.test(timestamp)) {
    // The value is not said: it is part of a header, and headers are never logged.
    const ms = /^\d{13,}$/.test(timestamp) ? " (milliseconds?)" : "";
    return { ok: false, reason: `timestamp in ${where} is not whole unix seconds${ms}` };
  }
  const tolerance = verify.toleranceSeconds ?? verifyDefaults.toleranceSeconds;
  if (Math.abs(nowSeconds - Number(timestamp)) > tolerance) {
    return { ok: false, reason: `timestamp in ${where} is outside the ${tolerance} s window` };
  }
  if (signatures.length === 0) return { ok: false, reason: `missing v1=<hex> signature in ${name}` };
  const expected = hmacHex(verify.secret, `${timestamp}.`, rawBody);
  // Check every candidate (no early exit) so timing does not tell which one matched.
  let matched = false;
  for (const sig of signatures) matched = safeEqual(sig.toLowerCase(), expected) || matched;
  // A valid signature names this exact request: it doubles as an idempotency key in the window.
  return matched
    ? { ok: true, replayKey: `sig:${expected}` }
    : { ok: false, reason: `${name} does not match the body` };
}
