/**
 * Which config values are secrets, and how to keep them out of messages.
 */

const SECRET_KEY = /(api_?key|token|secret|password|passwd|credential)/i;

/** True when a path goes through a key whose value must never be printed (api_key, token, secret…). */
export function isSecretPath(path: readonly PropertyKey[]): boolean {
  return path.some((segment) => typeof segment === "string" && SECRET_KEY.test(segment));
}

/**
 * Replaces every occurrence of each secret in `text` with `[hidden]`: a last line of defence for a
 * secret that reaches a message by an unforeseen path (e.g. pasted into the wrong field).
 */
export function redact(text: string, secrets: Iterable<string>): string {
  let out = text;
  for (const secret of secrets) {
    // Very short values ("1", "ab") would blank out ordinary words without protecting anything.
    if (secret.length >= 4) out = out.split(secret).join("[hidden]");
  }
  return out;
}
