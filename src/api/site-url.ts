/**
 * Turn a server address as people write it ("chat.example.org", "https://chat.example.org/",
 * a zuliprc `site` ending in "/api") into the origin to connect to and the API base path.
 */
import { ClientConfigError } from "./errors.ts";

export interface ServerAddress {
  /** e.g. "https://chat.example.org" */
  origin: string;
  /** e.g. "/api/v1" (with any path prefix the server lives under) */
  apiBase: string;
}

/** Parse `site`; `where` names its source in the error, e.g. "createClient option `url`". */
export function parseServerAddress(site: string, where: string): ServerAddress {
  const trimmed = site.trim();
  // Like the Python client: no scheme means https, except for localhost development servers.
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)
    ? trimmed
    : `${/^(localhost|127\.0\.0\.1)(:|\/|$)/.test(trimmed) ? "http" : "https"}://${trimmed}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new ClientConfigError(
      `${where} is not a valid server URL: ${JSON.stringify(site)}. Use the organization's address, ` +
        `e.g. "https://chat.example.org".`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ClientConfigError(`${where} must be an http:// or https:// URL, got ${JSON.stringify(site)}.`);
  }
  const prefix = url.pathname.replace(/\/+$/, "").replace(/\/api(\/v1)?$/, "");
  return { origin: url.origin, apiBase: `${prefix}/api/v1` };
}
