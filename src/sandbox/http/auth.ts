/**
 * HTTP Basic authentication on /api/v1, with the server's exact failures (NOTES §1, §5): every
 * key problem is 401 UNAUTHORIZED with the specific text in `msg`.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { SandboxData, UserRecord } from "../state/data.ts";
import { userByDeliveryEmail } from "../state/users.ts";
import { ApiError, unauthorized } from "./api-error.ts";

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Compare two secrets in constant time (equal-length digests). */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

export function authenticate(data: SandboxData, header: string | undefined): UserRecord {
  if (header === undefined) throw unauthorized();
  const space = header.indexOf(" ");
  const type = space < 0 ? header : header.slice(0, space);
  if (type.toLowerCase() !== "basic") {
    throw new ApiError(400, "BAD_REQUEST", "This endpoint requires HTTP basic authentication.");
  }
  const encoded = space < 0 ? "" : header.slice(space + 1).trim();
  const decoded = /^[A-Za-z0-9+/]*={0,2}$/.test(encoded)
    ? Buffer.from(encoded, "base64").toString("utf8")
    : "";
  const parts = decoded.split(":");
  if (parts.length !== 2) throw unauthorized("Invalid authorization header for basic auth");
  const email = parts[0]!.trim();
  const key = parts[1]!.trim();
  if (!/^[A-Za-z0-9]{32}$/.test(key)) throw unauthorized("Malformed API key");
  const user = userByDeliveryEmail(data, email);
  if (!user || user.system_bot || !sameSecret(user.api_key, key)) throw unauthorized("Invalid API key");
  if (!user.is_active) throw unauthorized("Account is deactivated");
  return user;
}
