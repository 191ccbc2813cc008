/**
 * Read the INI file the Zulip tools use ("zuliprc"): an `[api]` section with `email`, `key`,
 * `site`, and optionally `insecure` and `cert_bundle`. Errors name the file and line but never
 * quote a line, since a line may hold the API key.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { resolve } from "node:path";
import { apiSection } from "../config/zuliprc-section.ts";
import { ClientConfigError } from "./errors.ts";

export interface Zuliprc {
  email: string;
  apiKey: string;
  site: string;
  /** `insecure = true`: skip TLS certificate verification. */
  insecure: boolean;
  /** Path of a CA bundle in PEM (`cert_bundle`), resolved against the zuliprc's folder. */
  certBundle?: string;
}

const example =
  "A zuliprc looks like:\n[api]\nemail=my-bot@example.org\nkey=<API key>\nsite=https://example.org";

/** Read and parse a zuliprc file (`~/` allowed). */
export function readZuliprc(file: string): Zuliprc {
  const full = expandHome(file);
  let text: string;
  try {
    text = readFileSync(full, "utf8");
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? "unreadable";
    throw new ClientConfigError(
      `Cannot read zuliprc file ${full} (${reason}). Pass the path of the zuliprc downloaded for the bot.`,
      { cause: err },
    );
  }
  return parseZuliprc(text, full);
}

/** Parse zuliprc text; `file` is used in error messages and to resolve `cert_bundle`. */
export function parseZuliprc(text: string, file: string): Zuliprc {
  const { api, bad } = apiSection(text);
  if (bad) throw new ClientConfigError(`${file}:${bad.line}: ${bad.problem}. ${example}`);
  if (!api) throw new ClientConfigError(`${file}: no [api] section. ${example}`);
  const required = (name: string): string => {
    const value = api.get(name)?.value;
    if (!value) throw new ClientConfigError(`${file}: the [api] section has no \`${name}\`. ${example}`);
    return value;
  };
  const result: Zuliprc = {
    email: required("email"),
    apiKey: required("key"),
    site: required("site"),
    insecure: parseBool(api.get("insecure"), file),
  };
  const bundle = api.get("cert_bundle")?.value;
  if (bundle) result.certBundle = resolve(expandHome(file), "..", expandHome(bundle));
  return result;
}

function parseBool(entry: { value: string; line: number } | undefined, file: string): boolean {
  if (!entry) return false;
  const value = entry.value.toLowerCase();
  if (["true", "yes", "on", "1"].includes(value)) return true;
  if (["false", "no", "off", "0", ""].includes(value)) return false;
  throw new ClientConfigError(`${file}:${entry.line}: \`insecure\` must be true or false.`);
}

function expandHome(file: string): string {
  return file === "~" || file.startsWith("~/") ? homedir() + file.slice(1) : file;
}
