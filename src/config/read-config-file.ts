/**
 * Reading the config file itself: size cap, text checks, and plain errors for each failure.
 */
import { readTextFile } from "./read-text-file.ts";

/** Config files larger than this are refused (a config is a few kilobytes). */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** The text, or a problem with the whole file (`line` 0 when no position applies). */
export type ConfigText =
  | { readonly text: string }
  | { readonly missing: boolean; readonly line: number; readonly column: number; readonly message: string };

/**
 * Reads the config file as UTF-8 text, refusing binary data and files over {@link MAX_CONFIG_BYTES}.
 *
 * @example
 * ```ts
 * const result = await readConfigFile("/etc/bothost/bothost.yaml");
 * ```
 */
export async function readConfigFile(file: string): Promise<ConfigText> {
  const result = await readTextFile(file, MAX_CONFIG_BYTES);
  if ("error" in result) {
    const fix = result.missing
      ? "create it (see config.example.yaml), or name another file with --config FILE or BOTHOST_CONFIG"
      : result.error.startsWith("it is larger")
        ? `config files are limited to ${MAX_CONFIG_BYTES / 1024 / 1024} MiB`
        : "give the path of a readable YAML file";
    return {
      missing: result.missing,
      line: 0,
      column: 0,
      message: `cannot be read: ${result.error}; ${fix}`,
    };
  }
  // readTextFile decodes leniently; U+FFFD marks bytes that are not UTF-8 (or a literal U+FFFD,
  // which no config needs).
  const text = result.text.replace(/^\uFEFF/, "");
  const nul = text.indexOf("\u0000");
  const bad = text.indexOf("\uFFFD");
  const at = nul !== -1 ? nul : bad;
  if (at !== -1) {
    const before = text.slice(0, at);
    const line = before.split("\n").length;
    const column = at - before.lastIndexOf("\n");
    const what = nul !== -1 ? "binary data (a NUL byte)" : "bytes that are not UTF-8 text";
    return {
      missing: false,
      line,
      column,
      message: `contains ${what}: a config file is YAML text saved as UTF-8`,
    };
  }
  return { text };
}
