/**
 * Which server and organization a bot's state belongs to. Cursors, handled marks, effect records
 * and bookings name message and booking ids of one organization: applied to another they skip or
 * cancel the wrong things. So the daemon records the identity next to each bot's state and
 * compares it at every start (`daemon/server-check.ts`).
 *
 * What the server tells a client about its organization, in the POST /register response when
 * `realm` is in `fetch_event_types`:
 * - `realm_url` (feature level 257; `realm_uri` before): the organization's canonical URL. On a
 *   server hosting several organizations each has its own (a subdomain).
 * - `realm_date_created` (feature level 203): when the organization was created, which tells a
 *   server reinstalled at the same URL from the one before.
 * - `realm_uuid` (feature level 466): the organization's unique id. Where both sides have it, it
 *   alone decides: an organization keeps it when it moves to another URL.
 * The embedded sandbox reports a fresh `realm_uuid` for each instance (kept in its data file).
 */
import type { JsonValue, StateStore } from "./state-store.ts";

export interface ServerIdentity {
  /** The URL the bot talks to (the config's `server.url`, or the embedded sandbox's). */
  url: string;
  realm_url?: string;
  realm_date_created?: number;
  realm_uuid?: string;
}

/** The key, in a bot's namespace, that holds its {@link ServerIdentity}. */
const KEY = "server";

/** The identity recorded in a bot's namespace, or undefined (none yet, or unreadable). */
export async function readServerIdentity(botStore: StateStore): Promise<ServerIdentity | undefined> {
  const value = await botStore.get(KEY);
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  return typeof value.url === "string" ? (value as unknown as ServerIdentity) : undefined;
}

export async function writeServerIdentity(botStore: StateStore, identity: ServerIdentity): Promise<void> {
  await botStore.set(KEY, identity as unknown as JsonValue);
}

/**
 * True when both name the same organization: by `realm_uuid` where both have one; else by
 * `realm_url` (the configured URL where the server sent none) and, where both have it,
 * `realm_date_created`.
 */
export function sameServer(recorded: ServerIdentity, current: ServerIdentity): boolean {
  if (recorded.realm_uuid !== undefined && current.realm_uuid !== undefined) {
    return recorded.realm_uuid === current.realm_uuid;
  }
  if (urlOf(recorded) !== urlOf(current)) return false;
  const a = recorded.realm_date_created;
  const b = current.realm_date_created;
  return a === undefined || b === undefined || a === b;
}

/** True when `current` says more than `recorded` (or differently) about the same organization. */
export function identityChanged(recorded: ServerIdentity, current: ServerIdentity): boolean {
  return describeServer(recorded) !== describeServer(current);
}

/** One line for logs and errors, e.g. `https://chat.example.org (realm_uuid 5f…, created 2024-03-01)`. */
export function describeServer(identity: ServerIdentity): string {
  const details: string[] = [];
  if (identity.realm_uuid !== undefined) details.push(`realm_uuid ${identity.realm_uuid}`);
  if (identity.realm_date_created !== undefined) {
    details.push(`created ${new Date(identity.realm_date_created * 1000).toISOString()}`);
  }
  const url = identity.realm_url ?? identity.url;
  const via =
    identity.realm_url !== undefined && trim(identity.url) !== trim(url) ? ` via ${identity.url}` : "";
  return `${url}${via}${details.length > 0 ? ` (${details.join(", ")})` : ""}`;
}

function urlOf(identity: ServerIdentity): string {
  return trim(identity.realm_url ?? identity.url).toLowerCase();
}

function trim(url: string): string {
  return url.replace(/\/+$/, "");
}
