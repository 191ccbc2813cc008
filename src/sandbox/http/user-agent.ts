/**
 * The client name the server derives from a request (NOTES §13): the `client` parameter wins,
 * else the User-Agent's product name, else "Unspecified"; at most 30 characters.
 */
const UA = /^([^/ ]*[^0-9/(]*)(\/([^/ ]*))?([ /].*)?$/;

export function clientNameFrom(userAgent: string | undefined, clientParam: string | undefined): string {
  if (clientParam !== undefined && clientParam !== "") return clientParam.slice(0, 30);
  if (userAgent === undefined || userAgent === "") return "Unspecified";
  const m = UA.exec(userAgent);
  const name = m?.[1]?.trim();
  if (!name) return "Unparsable";
  return name.slice(0, 30);
}

const UI_CLIENTS = new Set([
  "zulipandroid",
  "zulipios",
  "zulipdesktop",
  "zulipmobile",
  "zulipelectron",
  "zulipterminal",
  "snipe",
  "website",
  "ios",
  "android",
]);

/** Client.default_read_by_sender(): only UI clients get their own sends marked read. */
export function defaultReadBySender(clientName: string): boolean {
  return UI_CLIENTS.has(clientName.toLowerCase());
}
