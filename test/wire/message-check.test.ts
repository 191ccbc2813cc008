/**
 * Message events are checked by hand on the hot path (src/wire/message-check.ts); the check must
 * accept exactly what the zod schema `eventSchemas.message` accepts. A deterministic mutator takes
 * valid events and changes every field at every depth (nested records and array elements
 * included): each field removed, set to undefined, null, each wrong type, an extra key, array
 * elements replaced or added in wrong shapes. For every result the hand check's verdict, and
 * parseEvent's, must equal the schema's, both when the schema accepts and when it refuses.
 */
import { describe, expect, it } from "vitest";
import { eventSchemas, parseEvent } from "../../src/wire/events.ts";
import { isMessageEvent } from "../../src/wire/message-check.ts";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json | undefined } | undefined;

const channelMessage = {
  id: 7,
  type: "message",
  flags: ["read", "mentioned"],
  local_message_id: "12.0",
  message: {
    id: 123,
    sender_id: 9,
    sender_email: "a@example.org",
    sender_full_name: "A",
    sender_realm_str: "zulip",
    avatar_url: "https://example.org/a.png",
    client: "website",
    content: "hello",
    content_type: "text/x-markdown",
    recipient_id: 4,
    timestamp: 1_700_000_000,
    type: "stream",
    display_recipient: "general",
    stream_id: 3,
    subject: "greetings",
    topic_links: [{ text: "#7", url: "https://example.org/7" }],
    is_me_message: false,
    reactions: [{ emoji_name: "tada", emoji_code: "1f389", reaction_type: "unicode_emoji", user_id: 9 }],
    submessages: [{ msg_type: "widget" }],
    flags: ["read"],
    last_edit_timestamp: 1_700_000_100,
    last_moved_timestamp: 1_700_000_200,
    rendered_content: "<p>hello</p>",
  },
};

const directMessage = {
  id: 8,
  type: "message",
  flags: [],
  message: {
    id: 124,
    sender_id: 9,
    sender_email: "a@example.org",
    sender_full_name: "A",
    avatar_url: null,
    client: "website",
    content: "hi",
    recipient_id: 5,
    timestamp: 1_700_000_000,
    type: "private",
    display_recipient: [
      { id: 9, email: "a@example.org", full_name: "A", is_mirror_dummy: false },
      { id: 10, email: "b@example.org", full_name: "B" },
    ],
    subject: "",
  },
};

const SEEDS: [string, Json][] = [
  ["a channel message with every optional field", channelMessage as Json],
  ["a direct message with only the required fields", directMessage as Json],
];

/** Values of each JSON type (and undefined), wrong for most fields and right for some. */
const REPLACEMENTS: [string, Json][] = [
  ["undefined", undefined],
  ["null", null],
  ["true", true],
  ["0", 0],
  ["-1", -1],
  ["1.5", 1.5],
  ["2^53", 2 ** 53],
  ['""', ""],
  ['"x"', "x"],
  ['"stream"', "stream"],
  ["[]", []],
  ["[42]", [42]],
  ['["x"]', ["x"]],
  ["[null]", [null]],
  ['[{ "nope": true }]', [{ nope: true }]],
  ["{}", {}],
  ['{ "nope": true }', { nope: true }],
];

/** Elements appended to, or put in place of, an array's elements. */
const ELEMENTS: [string, Json][] = [
  ["42", 42],
  ['"x"', "x"],
  ["null", null],
  ["true", true],
  ["[]", []],
  ["{}", {}],
  ['{ "nope": true }', { nope: true }],
];

interface Case {
  seed: string;
  path: string;
  change: string;
  value: Json;
}

const clone = (v: Json): Json => (v === undefined ? undefined : structuredClone(v));

/** `root` with the value at `path` replaced by `make(old)`; `make` returning REMOVE deletes it. */
const REMOVE = Symbol("remove");
function at(root: Json, path: (string | number)[], make: (old: Json) => Json | typeof REMOVE): Json {
  if (path.length === 0) {
    const made = make(root);
    return made === REMOVE ? undefined : made;
  }
  const copy = clone(root) as Record<string, Json> | Json[];
  let parent: Record<string, Json> | Json[] = copy;
  for (const key of path.slice(0, -1)) parent = (parent as Record<string, Json>)[key] as typeof parent;
  const last = path.at(-1)!;
  const made = make((parent as Record<string, Json>)[last]);
  if (made !== REMOVE) (parent as Record<string, Json>)[last] = made;
  else if (Array.isArray(parent)) parent.splice(last as number, 1);
  else delete parent[last];
  return copy;
}

/** Every path in `value`: records' keys and arrays' indexes, at every depth, the root included. */
function paths(value: Json, prefix: (string | number)[] = []): (string | number)[][] {
  const out = [prefix];
  if (Array.isArray(value)) for (const [i, v] of value.entries()) out.push(...paths(v, [...prefix, i]));
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...prefix, k]));
  }
  return out;
}

function mutations(): Case[] {
  const cases: Case[] = [];
  for (const [seed, root] of SEEDS) {
    cases.push({ seed, path: "(root)", change: "as is", value: clone(root) });
    for (const path of paths(root)) {
      const where = path.join(".") || "(root)";
      const add = (change: string, make: (old: Json) => Json | typeof REMOVE) =>
        cases.push({ seed, path: where, change, value: at(root, path, make) });
      if (path.length > 0) add("removed", () => REMOVE);
      for (const [name, v] of REPLACEMENTS) add(`set to ${name}`, () => clone(v));
      const old = path.reduce<Json>((v, k) => (v as Record<string, Json>)[k], root);
      if (Array.isArray(old)) {
        for (const [name, v] of ELEMENTS) {
          add(`with ${name} appended`, (o) => [...(o as Json[]), clone(v)]);
          if (old.length > 0)
            add(`with its first element replaced by ${name}`, (o) => [clone(v), ...(o as Json[]).slice(1)]);
        }
        if (old.length > 0)
          add("with its first element repeated", (o) => [...(o as Json[]), clone((o as Json[])[0])]);
      } else if (old !== null && typeof old === "object") {
        add("with an extra key", (o) => ({ ...(o as object), extra_field: 1 }));
        add("with an extra null key", (o) => ({ ...(o as object), extra_field: null }));
      }
    }
  }
  return cases;
}

describe("the hand check of message events", () => {
  const cases = mutations();

  it("agrees with the schema on every mutation, both ways", () => {
    const disagreements = cases
      .map((c) => {
        const raw = c.value;
        const schema = eventSchemas.message.safeParse(raw).success;
        const hand = isMessageEvent(raw);
        const parsed = parseEvent(raw).known && (raw as { type?: unknown }).type === "message";
        return { ...c, schema, hand, parsed };
      })
      .filter((r) => r.hand !== r.schema || r.parsed !== r.schema)
      .map(
        (r) =>
          `${r.seed}: ${r.path} ${r.change}: schema ${r.schema}, hand check ${r.hand}, parseEvent ${r.parsed}`,
      );
    expect(disagreements).toEqual([]);
  });

  it("covers both directions: many mutations the schema accepts and many it refuses", () => {
    const accepted = cases.filter((c) => eventSchemas.message.safeParse(c.value).success).length;
    expect(accepted).toBeGreaterThan(50);
    expect(cases.length - accepted).toBeGreaterThan(500);
  });

  it("refuses the shapes that once passed it: recipients and reactions of the wrong shape", () => {
    const recipients = at(directMessage as Json, ["message", "display_recipient"], () => [{ nope: true }]);
    const reactions = at(channelMessage as Json, ["message", "reactions"], () => [42]);
    for (const raw of [recipients, reactions]) {
      expect(isMessageEvent(raw)).toBe(false);
      expect(parseEvent(raw).known).toBe(false);
    }
  });
});
