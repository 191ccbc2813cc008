/**
 * Pre-generated message events shaped like the server's (see
 * docs/internals/server-behaviour.md#the-event-queue: a message event carries the message object
 * and the bot's flags), spread over channels, topics and direct-message groups so the runtime's
 * per-conversation queues run in parallel as they would in a real organization.
 */

export const BOT_USER_ID = 9000;
export const BOT_EMAIL = "bench-bot@bench.example";

const WORDS = "the quick brown fox jumps over a lazy dog while seven bots read every line twice".split(" ");

/** A deterministic pseudo-random generator (mulberry32) so every run serves the same events. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The message event with queue event id `id` (message ids start at 1,000,000). `long`: 200–500
 * characters of content, as a chat message with a sentence or three.
 */
export function messageEvent(id: number, random: () => number, long = false): Record<string, unknown> {
  const senderId = 100 + Math.floor(random() * 200);
  const direct = random() < 0.2;
  const count = long ? 46 + Math.floor(random() * 44) : 8 + Math.floor(random() * 24);
  const words = Array.from({ length: count }, () => {
    return WORDS[Math.floor(random() * WORDS.length)] as string;
  });
  const mentioned = random() < 0.1;
  const content = `${mentioned ? "@**Bench Bot** " : ""}${words.join(" ")}`;
  const channelId = 1 + Math.floor(random() * 50);
  const message: Record<string, unknown> = {
    id: 1_000_000 + id,
    sender_id: senderId,
    sender_email: `user${senderId}@bench.example`,
    sender_full_name: `User ${senderId}`,
    sender_realm_str: "bench",
    avatar_url: null,
    client: "ZulipMobile",
    content,
    content_type: "text/x-markdown",
    recipient_id: direct ? 5000 + senderId : 200 + channelId,
    timestamp: 1_767_225_600 + Math.floor(id / 100),
    type: direct ? "private" : "stream",
    display_recipient: direct
      ? [
          {
            id: senderId,
            email: `user${senderId}@bench.example`,
            full_name: `User ${senderId}`,
            is_mirror_dummy: false,
          },
          { id: BOT_USER_ID, email: BOT_EMAIL, full_name: "Bench Bot", is_mirror_dummy: false },
        ]
      : `channel-${channelId}`,
    subject: direct ? "" : `topic ${Math.floor(random() * 20)}`,
    topic_links: [],
    is_me_message: false,
    reactions: [],
    submessages: [],
  };
  if (!direct) message.stream_id = channelId;
  return { type: "message", message, flags: mentioned ? ["mentioned"] : [], id };
}

/** The body of GET /events for events [from, from + count). */
export function eventsBody(from: number, count: number, random: () => number, long = false): string {
  const events: Record<string, unknown>[] = [];
  for (let id = from; id < from + count; id++) events.push(messageEvent(id, random, long));
  return JSON.stringify({ result: "success", msg: "", events, queue_id: "q" });
}

/** The answer to POST /register for the bench bot's queue `queueId`. */
export function registerBody(queueId: string): Record<string, unknown> {
  return {
    result: "success",
    msg: "",
    queue_id: queueId,
    last_event_id: -1,
    zulip_version: "11.0",
    zulip_feature_level: 496,
    event_queue_longpoll_timeout_seconds: 90,
    user_id: BOT_USER_ID,
    email: BOT_EMAIL,
    full_name: "Bench Bot",
    realm_url: "http://bench.example",
  };
}
