/**
 * Message events are checked by hand on the hot path (src/wire/events.ts); the check must accept
 * exactly what the zod schema accepts, field by field.
 */
import { expect, it } from "vitest";
import { eventSchemas, parseEvent } from "../../src/wire/events.ts";

const valid = () => ({
  id: 7,
  type: "message",
  flags: ["read", "mentioned"],
  message: {
    id: 123,
    sender_id: 9,
    sender_email: "a@example.org",
    sender_full_name: "A",
    sender_realm_str: "zulip",
    avatar_url: null,
    client: "website",
    content: "hello",
    content_type: "text/x-markdown",
    recipient_id: 4,
    timestamp: 1_700_000_000,
    type: "stream",
    display_recipient: "general",
    stream_id: 3,
    subject: "greetings",
    topic_links: [],
    is_me_message: false,
    reactions: [],
    submessages: [],
  },
});

type Mutation = [string, (e: ReturnType<typeof valid>) => void];
const mutations: Mutation[] = [
  ["as is", () => {}],
  [
    "a direct message",
    (e) =>
      Object.assign(e.message, {
        type: "private",
        display_recipient: [{ id: 9, email: "a@example.org", full_name: "A" }],
        stream_id: undefined,
      }),
  ],
  ["extra fields", (e) => Object.assign(e, { extra: 1 }, { message: { ...e.message, new_field: "x" } })],
  ["no flags", (e) => delete (e as Partial<typeof e>).flags],
  ["a flag that is not text", (e) => (e.flags as unknown[]).push(3)],
  ["a fractional id", (e) => (e.message.id = 1.5)],
  ["no content", (e) => delete (e.message as Partial<typeof e.message>).content],
  ["an unknown message type", (e) => ((e.message as { type: string }).type = "channel")],
  ["stream_id as text", (e) => ((e.message as { stream_id: unknown }).stream_id = "3")],
  ["avatar_url a number", (e) => ((e.message as { avatar_url: unknown }).avatar_url = 5)],
  ["is_me_message as text", (e) => ((e.message as { is_me_message: unknown }).is_me_message = "no")],
  ["reactions not a list", (e) => ((e.message as { reactions: unknown }).reactions = {})],
  ["no subject", (e) => delete (e.message as Partial<typeof e.message>).subject],
  ["local_message_id a number", (e) => Object.assign(e, { local_message_id: 5 })],
  ["a null message", (e) => ((e as { message: unknown }).message = null)],
];

it.each(mutations)("%s: the hand check and the schema agree", (_name, mutate) => {
  const event = valid();
  mutate(event);
  const raw = JSON.parse(JSON.stringify(event));
  expect(parseEvent(raw).known).toBe(eventSchemas.message.safeParse(raw).success);
});
