/**
 * Which config values are secrets, and how to keep them out of messages.
 */

const SECRET_KEY = /(api_?key|token|secret|password|passwd|credential)/i;

/** True when a path goes through a key whose value must never be printed (api_key, token, secret…). */
export function isSecretPath(path: readonly PropertyKey[]): boolean {
  return path.some((segment) => typeof segment === "string" && SECRET_KEY.test(segment));
}

/**
 * Problems whose message is the project's own words alone: about a secret field, built from the
 * schema's text and the value's kind, never from the value, a key or any other text from outside
 * (see zod-problems). A secret's value cannot be in such a message, so {@link redactProblem} leaves
 * it as it is: a short secret that is also a word of it ("short") would otherwise garble it.
 */
const OWN_WORDS = new WeakSet<object>();

/** Marks `problem` as one whose message holds no text from outside (see {@link OWN_WORDS}). */
export function ownWordsOnly<P extends object>(problem: P): P {
  OWN_WORDS.add(problem);
  return problem;
}

/** `problem` with the secrets hidden from its path and, unless it is the project's own words, its message. */
export function redactProblem<P extends { path: string; message: string }>(
  problem: P,
  secrets: Iterable<string>,
): P {
  const message = OWN_WORDS.has(problem) ? problem.message : redact(problem.message, secrets);
  return { ...problem, path: redact(problem.path, secrets), message };
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
