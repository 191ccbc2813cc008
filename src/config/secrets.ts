/**
 * Which config values are secrets, and how to keep them out of messages.
 */
import type { Config } from "./schema.ts";

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

/**
 * Every secret of a loaded config: each string under a key named like a secret (bots' API keys,
 * outgoing-webhook tokens, secrets in bots' settings, the admin token, Sentinel passwords) and the
 * password of a `state.redis` URL. What logs and dead letters hide wherever it is quoted.
 */
export function configSecrets(config: Config): string[] {
  const found: string[] = [];
  const walk = (value: unknown, path: PropertyKey[]): void => {
    if (typeof value === "string") {
      if (isSecretPath(path)) found.push(value);
    } else if (typeof value === "object" && value !== null) {
      // A list's entries too: their keys ("0", "1") are no secret's.
      for (const [key, item] of Object.entries(value)) walk(item, [...path, key]);
    }
  };
  walk(config, []);
  const redis = config.state.redis;
  const password = typeof redis === "string" && URL.canParse(redis) ? new URL(redis).password : "";
  if (password !== "") found.push(password, decoded(password));
  return found;
}

/** A URL's percent-encoded part as written before encoding (as is where it is no valid encoding). */
function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
