/**
 * The compiled predicates must give zod's verdict on every input: each sample below passes its
 * schema, and every value inside it, replaced by values of other types or removed, must be
 * accepted or refused by the compiled check exactly as zod's safeParse decides.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { compileCheck } from "../../src/wire/compiled-check.ts";
import { eventSchemas, parseEvent } from "../../src/wire/events.ts";

const user = { id: 7, email: "a@x.org", full_name: "A", is_mirror_dummy: false };
const message = {
  id: 10,
  sender_id: 7,
  sender_email: "a@x.org",
  sender_full_name: "A",
  sender_realm_str: "x",
  avatar_url: null,
  client: "website",
  content: "hi",
  content_type: "text/x-markdown",
  recipient_id: 3,
  timestamp: 1_700_000_000,
  type: "stream",
  display_recipient: "general",
  stream_id: 1,
  subject: "greetings",
  topic_links: [{ text: "t", url: "https://x.org" }],
  is_me_message: false,
  reactions: [{ emoji_name: "smile", emoji_code: "1f642", reaction_type: "unicode_emoji", user_id: 7 }],
  submessages: [],
  flags: ["read"],
};

const samples: Record<string, unknown> = {
  message: { id: 1, type: "message", message, flags: ["mentioned"] },
  dm: {
    id: 2,
    type: "message",
    message: { ...message, type: "private", display_recipient: [user, { ...user, id: 8 }] },
    flags: [],
  },
  reaction: {
    id: 3,
    type: "reaction",
    op: "add",
    message_id: 10,
    emoji_name: "smile",
    emoji_code: "1f642",
    reaction_type: "unicode_emoji",
    user_id: 7,
    user: { user_id: 7, email: "a@x.org", full_name: "A" },
  },
  update_message: {
    id: 4,
    type: "update_message",
    user_id: null,
    edit_timestamp: 1,
    message_id: 10,
    message_ids: [10, 11],
    flags: [],
    rendering_only: false,
    stream_id: 1,
    propagate_mode: "change_all",
    orig_subject: "a",
    subject: "b",
  },
  delete_message: {
    id: 5,
    type: "delete_message",
    message_type: "stream",
    message_ids: [10],
    stream_id: 1,
    topic: "a",
  },
  typing: {
    id: 6,
    type: "typing",
    op: "start",
    message_type: "direct",
    sender: { user_id: 7, email: "a@x.org" },
    recipients: [{ user_id: 7, email: "a@x.org" }],
  },
  realm_user: { id: 7, type: "realm_user", op: "add", person: { user_id: 9, full_name: "N" } },
  subscription: {
    id: 8,
    type: "subscription",
    op: "add",
    subscriptions: [{ stream_id: 1, name: "general", subscribers: [7] }],
  },
  scheduled_messages: { id: 9, type: "scheduled_messages", op: "remove", scheduled_message_id: 4 },
};

const replacements: unknown[] = [undefined, null, 0, 1.5, -3, "", "x", true, [], [1], {}, { a: 1 }];

/** Every path inside `value` (objects and arrays), the root excluded. */
function paths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== "object" || value === null) return [];
  const keys = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
  return keys.flatMap((k) => [[...at, k], ...paths((value as Record<string, unknown>)[k], [...at, k])]);
}

function replaced(root: unknown, path: (string | number)[], next: unknown): unknown {
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = path.at(-1) as string | number;
  if (next === undefined && !Array.isArray(parent)) delete parent[last];
  else parent[last] = next;
  return copy;
}

describe("compileCheck", () => {
  it("compiles every event schema", () => {
    const missing = Object.entries(eventSchemas).filter(([, s]) => compileCheck(s) === undefined);
    expect(missing.map(([type]) => type)).toEqual([]);
  });

  for (const [name, sample] of Object.entries(samples)) {
    it(`agrees with zod on ${name} and on every mutation of it`, () => {
      const type = (sample as { type: keyof typeof eventSchemas }).type;
      const schema = eventSchemas[type];
      const check = compileCheck(schema);
      expect(schema.safeParse(sample).success).toBe(true);
      expect(check?.(sample)).toBe(true);
      let compared = 0;
      let refused = 0;
      for (const path of paths(sample)) {
        for (const next of replacements) {
          const input = replaced(sample, path, next);
          const zodSays = schema.safeParse(input).success;
          expect({ path: path.join("."), next, verdict: check?.(input) }).toEqual({
            path: path.join("."),
            next,
            verdict: zodSays,
          });
          compared++;
          if (!zodSays) refused++;
        }
      }
      // The mutations must exercise both verdicts, or the comparison proves little.
      expect(compared).toBeGreaterThan(30);
      expect(refused).toBeGreaterThan(10);
    });
  }

  it("refuses schemas whose output can differ from their input", () => {
    expect(compileCheck(z.object({ a: z.string() }))).toBeUndefined(); // strips unknown keys
    expect(compileCheck(z.looseObject({ a: z.string().default("x") }))).toBeUndefined();
    expect(compileCheck(z.looseObject({ a: z.number().min(1) }))).toBeUndefined();
    expect(compileCheck(z.looseObject({ a: z.string().transform((s) => s.length) }))).toBeUndefined();
    expect(compileCheck(z.looseObject({ a: z.string() }))).toBeTypeOf("function");
  });

  it("parseEvent hands a valid event on as the same object, and still explains a bad one", () => {
    const sample = samples.message as Record<string, unknown>;
    const parsed = parseEvent(sample);
    expect(parsed.known).toBe(true);
    expect(parsed.event).toBe(sample);
    const bad = parseEvent(replaced(sample, ["message", "sender_id"], "7"));
    expect(bad.known).toBe(false);
    expect(bad.known === false && bad.issue).toContain("message.sender_id");
  });
});
