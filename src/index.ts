/**
 * bothost: the public surface. Everything a bot author or an embedding program may import.
 *
 * @example
 * ```ts
 * import { createClient } from "bothost";
 * const client = createClient({ url: "https://chat.example.org", email, apiKey });
 * const me = await client.users.me();
 * ```
 */

export type { EventMap, GenericEvent, KnownEventType, ServerEvent } from "./wire/events.ts";
// ── Wire types (snake_case, 1:1 with the server's documentation) ─────────────────────────────
export type {
  Channel,
  EditSnapshot,
  Message,
  OwnUser,
  Playground,
  SavedSnippet,
  ScheduledMessage,
  Topic,
  User,
} from "./wire/records.ts";
export type { RegisterResponse } from "./wire/responses.ts";
