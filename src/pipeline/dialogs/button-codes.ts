/**
 * What emoji a question's buttons are, beyond their names. The server knows an emoji by its code
 * (`reaction_type` and `emoji_code`) and several names (👍 is `+1`, `thumbs_up` and `like`); a
 * reaction with an emoji already on the message is reported under the name of the reaction made
 * first. A person who presses before the bot put its button (or where the server refused it)
 * makes a reaction under the name their client chose, not always the button's: it answers by its
 * code. The codes come from the server's emoji data (`server_emoji_data_url`), read once per bot
 * client, and are kept with the question in the dialog's log. Without that data (an older server,
 * a file on another origin, an error), buttons are matched by name only.
 */
import type { Client } from "../../api/create-client.ts";

/** An emoji's identity as reactions carry it: `reaction_type:emoji_code`. */
export const emojiIdentity = (reactionType: unknown, emojiCode: unknown): string =>
  `${reactionType}:${emojiCode}`;

/** The server's one extra emoji, whose name is its code. */
const ZULIP_EMOJI = "zulip";

/** How long a read of the emoji data may take. */
const READ_TIMEOUT_MS = 10_000;

/** The emoji data read per client: name → identity (a failed read is forgotten, tried again). */
const read = new WeakMap<Client, Promise<ReadonlyMap<string, string> | undefined>>();

/**
 * The identity of each of `names` the server's emoji data gives, by name; undefined when it gives
 * none of them. Never fails: a read that fails (or is aborted by `signal`) gives undefined.
 */
export async function buttonCodes(
  api: Client,
  dataUrl: string | undefined,
  names: readonly string[],
  signal: AbortSignal,
): Promise<Record<string, string> | undefined> {
  const known = await emojiNames(api, dataUrl, signal);
  const codes: Record<string, string> = {};
  for (const name of names) {
    const id = name === ZULIP_EMOJI ? emojiIdentity("zulip_extra_emoji", ZULIP_EMOJI) : known?.get(name);
    if (id !== undefined) codes[name] = id;
  }
  return Object.keys(codes).length > 0 ? codes : undefined;
}

function emojiNames(api: Client, dataUrl: string | undefined, signal: AbortSignal) {
  if (dataUrl === undefined) return undefined;
  let names = read.get(api);
  if (names === undefined) {
    names = readNames(api, dataUrl, signal);
    read.set(api, names);
    // A failed read is tried again by the next question.
    names.then((got) => got === undefined && read.get(api) === names && read.delete(api));
  }
  return names;
}

async function readNames(api: Client, dataUrl: string, signal: AbortSignal) {
  const at = URL.parse(dataUrl, api.origin);
  // Read with the bot's connection to its server, never sent elsewhere.
  if (at === null || at.origin !== api.origin) return undefined;
  try {
    // One try, briefly: the question's log waits for it (a failed read is tried again later).
    const options = { signal, retry: false, timeoutMs: READ_TIMEOUT_MS } as const;
    const data = await api.server.emojiData(`${at.pathname}${at.search}`, options);
    const names = new Map<string, string>();
    for (const [code, all] of Object.entries(data.code_to_names))
      for (const name of all) names.set(name, emojiIdentity("unicode_emoji", code));
    return names;
  } catch {
    return undefined;
  }
}
