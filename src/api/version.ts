/** bothost's own version, read once from package.json (two levels up from src/api and dist/api). */
import { readFileSync } from "node:fs";

function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
      version?: unknown;
    };
    return typeof pkg.version === "string" ? pkg.version : "0.0.0";
  } catch {
    return "0.0.0";
  }
}

export const bothostVersion: string = readVersion();

/**
 * The default User-Agent. The server names the sending client after it (`message.client`), and
 * only UI client names get their own messages marked read (NOTES §13), so a bot must not pose as one.
 */
export const defaultUserAgent = `bothost/${bothostVersion}`;
