/**
 * Secret comparison in constant time: both sides are hashed first, so `timingSafeEqual` compares
 * equal-length digests and the secret's length leaks no more than its content.
 */
import { createHash, timingSafeEqual } from "node:crypto";

/** True when `given` equals `expected`, compared in constant time. */
export function safeEqual(given: string | Buffer, expected: string | Buffer): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  // The explicit length check guards against a (practically impossible) digest collision only.
  return timingSafeEqual(a, b) && Buffer.byteLength(given) === Buffer.byteLength(expected);
}
