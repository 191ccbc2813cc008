/**
 * The `[api]` section of a zuliprc file, as the server's "Download zuliprc" button writes it.
 */

/** The fields bothost reads from a zuliprc. */
export interface Zuliprc {
  readonly email?: string;
  readonly key?: string;
  readonly site?: string;
}

/**
 * Reads `email`, `key` and `site` from the `[api]` section (INI: `name=value` or `name: value`,
 * comments start with `#` or `;`).
 *
 * @example
 * ```ts
 * parseZuliprc("[api]\nemail=bot@chat.example.org\nkey=…\nsite=https://chat.example.org\n");
 * ```
 */
export function parseZuliprc(text: string): Zuliprc {
  const out: Record<string, string> = {};
  let section = "";
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = header[1]!.trim().toLowerCase();
      continue;
    }
    const match = /^([^=:]+)[=:](.*)$/.exec(line);
    if (section === "api" && match) {
      const name = match[1]!.trim().toLowerCase();
      if (name === "email" || name === "key" || name === "site") out[name] = match[2]!.trim();
    }
  }
  return out;
}
