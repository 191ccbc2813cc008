/**
 * The web app's narrow addresses as the server writes them into messages: a channel is
 * `{id}-{name, spaces as dashes}`, each part in the server's URL-hash encoding.
 */
import type { StreamRecord } from "./data.ts";

export const channelSlug = (stream: StreamRecord): string =>
  `${stream.stream_id}-${hashComponent(stream.name.replace(/ /g, "-"))}`;

/** The server's URL-hash encoding: percent-encoding (`*` kept) with `%` written as `.`. */
export function hashComponent(s: string): string {
  const encoded = [...new TextEncoder().encode(s)]
    .map((b) => {
      const c = String.fromCharCode(b);
      return b < 128 && /[A-Za-z0-9_.\-~*]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
    })
    .join("");
  return encoded.replace(/[%().]/g, (c) => ({ "%": ".", "(": ".28", ")": ".29", ".": ".2E" })[c]!);
}
