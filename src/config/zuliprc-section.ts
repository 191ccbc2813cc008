/**
 * The lines of a zuliprc (the INI file the Zulip tools use), read alike by the client
 * (api/zuliprc.ts, which throws on a problem) and the config (resolve-credentials.ts, which
 * reports it at the bot's `zuliprc` key).
 */

/** A zuliprc's settings of one section, by lower-cased name, with their line numbers. */
export type ZuliprcSection = Map<string, { value: string; line: number }>;

/**
 * The `[api]` section of zuliprc `text` (undefined: the file has none), and the first line that is
 * no setting of a section, a `[section]` header, a comment nor blank (`bad`: its number and what is
 * wrong with it, never its text: it may hold the key).
 */
export function apiSection(text: string): { api?: ZuliprcSection; bad?: { line: number; problem: string } } {
  const sections = new Map<string, ZuliprcSection>();
  let current: ZuliprcSection | undefined;
  let bad: { line: number; problem: string } | undefined;
  const lines = text.split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[([^\]]+)\]$/.exec(line);
    if (header) {
      const name = (header[1] ?? "").trim().toLowerCase();
      current = sections.get(name) ?? new Map();
      sections.set(name, current);
      continue;
    }
    const match = /^([^=:\s][^=:]*?)\s*[=:]\s*(.*)$/.exec(line);
    if (match && current)
      current.set((match[1] ?? "").toLowerCase(), { value: match[2] ?? "", line: index + 1 });
    else
      bad ??= {
        line: index + 1,
        problem: match
          ? "a setting comes before any `[api]` header"
          : "expected `name = value` or a `[section]` header",
      };
  }
  return { api: sections.get("api"), bad };
}
