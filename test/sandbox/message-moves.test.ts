/**
 * A message deleted, moved, or in a channel its sender left, as the server answers for it (see
 * docs/internals/server-behaviour.md): GET /messages by `message_ids` with no narrow lists what the
 * user holds (a message moved to a channel it is not subscribed to is no longer held; one in a
 * private channel it left still is); with `channels:public` it lists every public channel's;
 * GET /messages/{id} answers by access ("Invalid message(s)" for a deleted message and for one the
 * user may not read alike).
 */
import { openQueue } from "../support/sandbox/events.ts";
import { BOT, type Caller, expect, OWNER, test } from "../support/sandbox/fixture.ts";

type Msg = Record<string, unknown>;

/** The ids GET /messages lists among `ids`, with `narrow` if given. */
async function listed(as: Caller, ids: number[], narrow?: unknown[]): Promise<number[]> {
  const reply = await as.get("/messages", { message_ids: ids, ...(narrow ? { narrow } : {}) });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.messages.map((m: Msg) => m.id);
}

const PUBLIC = [{ operator: "channels", operand: "public" }];
const INVALID = { result: "error", msg: "Invalid message(s)", code: "BAD_REQUEST" };

/** A channel made by the owner, the bot not in it unless listed. */
async function channel(owner: Caller, name: string, inviteOnly: boolean, principals: string[] = [OWNER]) {
  const reply = await owner.post("/users/me/subscriptions", {
    subscriptions: [{ name }],
    invite_only: inviteOnly,
    principals,
  });
  expect(reply.status, reply.text).toBe(200);
  const id = await owner.get("/get_stream_id", { stream: name });
  return id.body.stream_id as number;
}

/** A queue of the edits and deletions `as` is sent, deletions in bulk form. */
const editsQueue = (as: Caller) =>
  openQueue(as, {
    event_types: ["update_message", "delete_message"],
    client_capabilities: { notification_settings_null: true, bulk_message_deletion: true },
  });

test("moved to a public channel its sender is not in: no longer held, still readable; the sender's queue gets the edit", async ({
  sb,
}) => {
  const owner = sb.as(OWNER);
  const bot = sb.as(BOT);
  const kitchen = await channel(owner, "kitchen", false);
  const q = await editsQueue(bot);
  const { id } = sb.sandbox.control.sendAs(BOT, { type: "stream", to: "general", topic: "t", content: "Q?" });
  const moved = await owner.patch(`/messages/${id}`, { stream_id: kitchen, topic: "u" });
  expect(moved.status, moved.text).toBe(200);
  expect((await q.peek()).map((e) => [e.type, e.new_stream_id])).toEqual([["update_message", kitchen]]);
  expect(await listed(bot, [id])).toEqual([]);
  expect(await listed(bot, [id], PUBLIC)).toEqual([id]);
  const one = await bot.get(`/messages/${id}`);
  expect(one.body.message).toMatchObject({ id, stream_id: kitchen, subject: "u" });
});

test("moved to a private channel its sender is not in: told as deleted, and read as one", async ({ sb }) => {
  const owner = sb.as(OWNER);
  const bot = sb.as(BOT);
  const vault = await channel(owner, "vault", true);
  const q = await editsQueue(bot);
  const { id } = sb.sandbox.control.sendAs(BOT, { type: "stream", to: "general", topic: "t", content: "Q?" });
  const deleted = sb.sandbox.control.sendAs(BOT, { type: "stream", to: "general", topic: "t", content: "D" });
  expect((await owner.patch(`/messages/${id}`, { stream_id: vault })).status).toBe(200);
  expect((await owner.delete(`/messages/${deleted.id}`)).status).toBe(200);
  expect(await q.peek()).toEqual([
    { type: "delete_message", message_type: "stream", stream_id: 1, topic: "t", message_ids: [id], id: 0 },
    {
      type: "delete_message",
      message_type: "stream",
      stream_id: 1,
      topic: "t",
      message_ids: [deleted.id],
      id: 1,
    },
  ]);
  // Moved out of reach and deleted read the same, by either read.
  for (const gone of [id, deleted.id]) {
    expect(await listed(bot, [gone])).toEqual([]);
    expect(await listed(bot, [gone], PUBLIC)).toEqual([]);
    const one = await bot.get(`/messages/${gone}`);
    expect([one.status, one.body]).toEqual([400, INVALID]);
  }
});

test("in a private channel its sender left: still held (listed with no narrow), but GET /messages/{id} refuses it", async ({
  sb,
}) => {
  const owner = sb.as(OWNER);
  const bot = sb.as(BOT);
  await channel(owner, "vault", true, [OWNER, BOT]);
  const { id } = sb.sandbox.control.sendAs(BOT, { type: "stream", to: "vault", topic: "t", content: "Q?" });
  expect((await bot.get(`/messages/${id}`)).status).toBe(200);
  const left = await bot.delete("/users/me/subscriptions", { subscriptions: ["vault"] });
  expect(left.status, left.text).toBe(200);
  expect(await listed(bot, [id])).toEqual([id]);
  expect(await listed(bot, [id], PUBLIC)).toEqual([]);
  const one = await bot.get(`/messages/${id}`);
  expect([one.status, one.body]).toEqual([400, INVALID]);
});
