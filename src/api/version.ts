/** bothost's own version, read once from package.json (two levels up from src/api and dist/api). */
import { readFileSync } from "node:fs";

let version: unknown;
try {
  version = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version;
} catch {}

export const bothostVersion: string = typeof version === "string" ? version : "0.0.0";

/**
 * The default User-Agent. The server names the sending client after it (`message.client`), and
 * only UI client names get their own messages marked read (see
 * docs/internals/server-behaviour.md#client-names), so a bot must not pose as one.
 */
export const defaultUserAgent = `bothost/${bothostVersion}`;
