/**
 * `ctx.startDialog(userId, text)`: a dialog the bot begins itself, in a direct message with the
 * person, as if they had sent `text` there (a command, say): its first message is made up here,
 * and its prompts ask them.
 */
import { createHash, randomUUID } from "node:crypto";
import { BothostError } from "../../errors/bothost-error.ts";
import type { DeadLetterSource } from "../../state/dead-letters.ts";
import type { JsonValue } from "../../state/state-store.ts";
import { realClock } from "../../time/clock.ts";
import type { ServerEvent } from "../../wire/events.ts";
import type { BaseContext, ContextDeps, SendEffects } from "../context-types.ts";
import { conversationKey } from "../conversation-key.ts";
import { newHead } from "./dialog-record.ts";

/** How many unsure starts a bot remembers: the oldest is dropped past it. */
const UNSURE_KEPT = 1_000;

/**
 * Starts whose log write failed with its outcome unknown (a reply lost), by bot and dialog id: the
 * time the start was made at. A start of the same dialog again (the handler's next attempt) is
 * made at that time, so that its write is the very same append, found made if the first landed.
 */
const unsure = new WeakMap<object, Map<string, number>>();

/**
 * A context's `ctx.startDialog`: its run's `effects` (once per event or job occurrence: a re-run
 * finds it started), `signal` when the run is no message's (see {@link startDialog}), and `source`,
 * how the run came (its context was made with it), which the dialog's first run's dead letter keeps.
 */
export function startDialogOf(
  deps: ContextDeps<unknown>,
  signal: AbortSignal | undefined,
  effects: SendEffects | undefined,
  source: DeadLetterSource,
): BaseContext<unknown>["startDialog"] {
  const start = (userId: number, text: string, key: string) =>
    startDialog(deps, userId, text, key, signal, source);
  return async (userId, text) => {
    if (!deps.dialogs)
      throw new BothostError("HELPERS_UNAVAILABLE", "ctx.startDialog() needs a bot runtime.");
    if (!Number.isInteger(userId) || userId <= 0)
      throw new BothostError(
        "INVALID_ARGUMENT",
        typeof userId === "string"
          ? `ctx.startDialog(): userId must be a user id (a number), got the string ${JSON.stringify(userId)}.`
          : `ctx.startDialog(): userId must be a user id, got ${String(userId)}.`,
      );
    if (typeof text !== "string" || text.trim() === "")
      throw new BothostError(
        "INVALID_ARGUMENT",
        `ctx.startDialog(): text must be what the person's message would say (a command, say), got ${JSON.stringify(text)}.`,
      );
    if (!effects) return start(userId, text, `${randomUUID()}|${userId}|${text}`);
    const key = `${effects.run.eventKey}|${userId}|${text}`;
    return effects.run.once("dialog", { act: () => start(userId, text, key) });
  };
}

/**
 * Start the dialog of `key` (the same key starts nothing again): resolves false when it exists,
 * another dialog waits for the person in their direct messages with the bot, the server knows no
 * such person or they are deactivated, or the person is a bot (this one included). With `signal`
 * (a job's start, a webhook's: no message's run, which that conversation's tasks may queue
 * behind), a dialog there past its deadline (yesterday's, found at a start after a downtime), or
 * with a run or an end under way, is waited for first: timed out or ended, this one begins.
 * `source`: how the run starting it came.
 */
export async function startDialog(
  deps: ContextDeps<unknown>,
  userId: number,
  text: string,
  key: string,
  signal: AbortSignal | undefined,
  source: DeadLetterSource,
): Promise<boolean> {
  const dialogs = deps.dialogs;
  // The bot cannot be asked (a group it is in, say): nothing is started.
  if (dialogs === undefined || userId === deps.bot.userId) return false;
  const digest = createHash("sha256").update(key).digest();
  // The dialog's id: `s` and hex digits, accepted by every operator's route; its first message's
  // id is negative (no server message has one), from the same digest.
  const id = `s${digest.subarray(0, 6).toString("hex")}`;
  const messageId = -(digest.readUIntBE(0, 6) + 1);
  const users = deps.services?.users;
  const user = await users?.get(userId);
  // Nobody the server knows, a deactivated person (the server refuses the question), or a bot
  // (whose messages reach no handler, so no answer could come): none is asked.
  if ((users !== undefined && user === undefined) || user?.is_active === false || user?.is_bot) return false;
  const name = user?.full_name ?? `user ${userId}`;
  const tried = unsure.get(dialogs);
  const now = tried?.get(id) ?? (deps.clock ?? realClock).now();
  const self = deps.bot;
  const event = {
    id: -1,
    type: "message",
    flags: ["read"],
    message: {
      id: messageId,
      type: "private",
      sender_id: userId,
      sender_email: user?.email ?? "",
      sender_full_name: name,
      content: text,
      display_recipient: [
        { id: userId, email: user?.email ?? "", full_name: name },
        { id: self.userId, email: self.email, full_name: self.fullName ?? self.email },
      ],
      subject: "",
      recipient_id: 0,
      timestamp: Math.floor(now / 1000),
      client: "bothost",
      content_type: "text/x-markdown",
    },
  };
  const conversation = conversationKey(event as unknown as ServerEvent);
  const head = newHead({ id, userId, userName: name, conversation, where: "direct message", startedAt: now });
  const busy = dialogs.busy(conversation, userId, id);
  if (busy && (signal === undefined || (await dialogs.busyAfter(conversation, userId, id, signal, true))))
    return false;
  try {
    const started = await dialogs.begin(head, event as unknown as JsonValue, source);
    tried?.delete(id);
    return started;
  } catch (err) {
    const kept = tried ?? new Map<string, number>();
    unsure.set(dialogs, kept);
    kept.delete(id);
    kept.set(id, now);
    if (kept.size > UNSURE_KEPT) kept.delete(kept.keys().next().value!);
    throw err;
  }
}
