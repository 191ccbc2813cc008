/**
 * How a context posts a message: one POST /messages (a lost answer shown stored by the send's own
 * message event, its local echo), made once per event as an effect of the run, where the
 * conversation is now (a dialog's conversation moved, or the message answered moved while the
 * handler worked: `follow`).
 */
import type { SendMessageParams } from "../api/resources/messages.ts";
import { printOf } from "../effects/effect-claims.ts";
import { failpoint } from "../effects/failpoints.ts";
import { ECHO_WAIT_MS, isAmbiguous } from "../effects/local-echo.ts";
import { normalizeContent } from "../effects/schedule/normalize.ts";
import { findSent } from "../effects/verify-send.ts";
import type { JsonValue } from "../state/state-store.ts";
import type { AnyEvent } from "../wire/events.ts";
import type { ContextDeps, SendEffects } from "./context-types.ts";
import { placed } from "./dialogs/dialog-moves.ts";
import { newerOf } from "./event-fields.ts";
import type { ReplyFn } from "./incoming.ts";
import { replyTarget } from "./reply-target.ts";

type Send = (params: SendMessageParams) => Promise<{ id: number }>;
/** `params` aimed where their conversation is now (see reply-follow.ts). */
export type Follow = (
  params: SendMessageParams,
  earlier?: boolean,
) => SendMessageParams | Promise<SendMessageParams>;

export function sendOf<S>(
  deps: ContextDeps<S>,
  signal: AbortSignal,
  effects: SendEffects | undefined,
  follow: Follow,
): Send {
  const echo = deps.services?.echo;
  const post = async (params: SendMessageParams) => {
    // With a local id the send's own message event can prove it stored if the answer is lost.
    const tag = echo?.tag();
    try {
      const { id } = await deps.api.messages.send({ read_by_sender: true, ...params, ...tag }, { signal });
      echo?.seen(id);
      failpoint("message-sent");
      return { id };
    } catch (err) {
      const id = tag && isAmbiguous(err) ? await echo!.wait(tag.local_id, ECHO_WAIT_MS, signal) : undefined;
      if (id === undefined) throw err;
      deps.services!.echoed(id, err);
      echo!.seen(id);
      return { id };
    } finally {
      if (tag) echo!.done(tag.local_id);
    }
  };
  if (!effects) return async (params) => post(await follow(params));
  const printed = (params: SendMessageParams, content = params.content) =>
    printOf([params.type, params.to, (params as { topic?: string }).topic ?? null, content]);
  // `floor`: the newest message id known when the send was claimed; the send, if made, is newer.
  const sent = (params: SendMessageParams, matches?: (content: string) => boolean, floor?: unknown) => {
    const newer = newerOf(effects);
    const after = typeof floor === "number" && floor > (newer.after ?? 0) ? floor : newer.after;
    return findSent(deps.api, deps.bot.userId, params, { ...newer, after }, signal, matches).then(
      (found) => found && { id: found.id },
    );
  };
  // Each message posted (and each booking, each snippet created) is an effect: made once per
  // event, however often the handler runs. Matched by what the code sent; made where the
  // dialog's conversation moved to, if it did, and where the message answered is now.
  return async (params) => {
    const n = effects.run.current + 1; // numbered as `once` begins
    // Where this run aims the send, resolved as it is claimed (see the target below).
    let aimed: SendMessageParams | undefined;
    const aim = async () => placed(await follow(params), effects.moves);
    const result = await effects.run.once(
      "send",
      {
        // Kept in the claim: the newest message id known (a message of the same words the bot
        // posted before it, another event's, is older, and never taken for this one), and where
        // it is sent. A run again after a crash reads the message anew: moved alone since (a
        // moderator's change_one), the run again aims at its new place, while the send made
        // before the crash stayed where it was sent, and is looked for there first.
        target: async () => {
          aimed = await aim();
          return { ...(echo && { after: echo.newest }), place: placeOf(aimed) };
        },
        act: async () => post(aimed ?? (await aim())),
        // Looked for where its claim aimed; then where the code aims it; then, if the message
        // answered moved since, where it is now. The words its claim was sent with count too (the
        // code reworded it since, a template naming a topic a moderator moved the message to), so
        // a send or a dialog's question (matched by its step) made before a crash is not made again.
        // Its claim keeps the words as the server stores them: the read-back hashes the stored copy
        // (a claim written before kept the words as sent, the same unless they had whitespace to strip).
        args: () => printed(params, normalizeContent(params.content)),
        verify: async (pending) => {
          const stored = normalizeContent(params.content);
          const kept = keptPlace(pending.target);
          const keptParams = kept && ({ ...params, ...kept } as SendMessageParams);
          const matches = (content: string) =>
            content === stored ||
            (pending.args !== undefined &&
              (printed(params, content) === pending.args ||
                (keptParams !== undefined && printed(keptParams, content) === pending.args)));
          const floor = floorOf(pending.target);
          const looked = new Set<string>();
          const look = (place: SendMessageParams) => {
            const key = JSON.stringify(placeOf(place));
            if (looked.has(key)) return undefined;
            looked.add(key);
            return sent(place, matches, floor);
          };
          return (
            (keptParams && (await look(keptParams))) ??
            (await look(placed(params, effects.moves))) ??
            look(placed(await follow(params, true), effects.moves))
          );
        },
        signal,
      },
      printed(params),
    );
    return answeredOrAgain(
      effects,
      n,
      result,
      () => sent(placed(params, effects.moves), (c) => c === normalizeContent(params.content)),
      async () => post(placed(await follow(params), effects.moves)),
    );
  };
}

/**
 * `result`, send `n`'s: one an outgoing webhook's reply gave in its delivery's answer (id -1), found
 * in the store as an earlier run left it, may not have reached the server (a kill as the answer
 * went out): looked for in the conversation (`find`), and made again (`make`) when the server did
 * not post it. A dialog's question carried in its log is taken as it is.
 */
async function answeredOrAgain(
  effects: SendEffects,
  n: number,
  result: { id: number },
  find: () => Promise<{ id: number } | undefined>,
  make: () => Promise<{ id: number }>,
): Promise<{ id: number }> {
  if (result.id !== -1 || !effects.run.madeEarlier(n)) return result;
  return (await find()) ?? make();
}

/**
 * An outgoing webhook's reply, `reply` (in the HTTP answer, or through the API once its deadline
 * passed), as an effect of the run: made once per event, like a send. Its claim is committed before
 * it is made, so that a run again after a kill (the delivery's dead letter replayed at the next
 * start) looks for it in the conversation instead of replying twice. A reply recorded as given in
 * an answer (id -1) may not have reached the server (a kill as the answer went out): a run again
 * looks for it too, and makes it again when the server did not post it.
 */
export function webhookReplyOf<S>(
  deps: ContextDeps<S>,
  ctx: { readonly event: AnyEvent; readonly signal: AbortSignal },
  effects: SendEffects,
  reply: ReplyFn,
): ReplyFn {
  const posted = async (content: string) => {
    const params = { ...replyTarget(ctx.event, undefined, deps.bot.userId), content };
    // Neither split nor refused when long: the server cut it to its max_message_length.
    const stored = normalizeContent(content, deps.server.maxMessageLength);
    const found = await findSent(
      deps.api,
      deps.bot.userId,
      params,
      newerOf(effects),
      ctx.signal,
      (c) => c === stored,
    );
    return found && { id: found.id };
  };
  return async (content) => {
    const n = effects.run.current + 1; // numbered as `once` begins
    const act = () => reply(content);
    const result = await effects.run.once("send", { act, verify: () => posted(content), signal: ctx.signal });
    return answeredOrAgain(
      effects,
      n,
      result,
      () => posted(content),
      () => reply(content),
    );
  };
}

/** Where a send goes: its conversation, without its words. */
type Place = { type: string; to: JsonValue; topic?: string };

function placeOf(params: SendMessageParams): Place {
  const { type, to } = params;
  const topic = (params as { topic?: string }).topic;
  return topic === undefined ? { type, to: to as JsonValue } : { type, to: to as JsonValue, topic };
}

/** A send claim's target: `{ after, place }`; a claim written before kept `after` alone, a number. */
function floorOf(target: JsonValue | undefined): number | undefined {
  if (typeof target === "number") return target;
  const after = isObject(target) ? target.after : undefined;
  return typeof after === "number" ? after : undefined;
}

function keptPlace(target: JsonValue | undefined): Place | undefined {
  const place = isObject(target) ? target.place : undefined;
  return isObject(place) && typeof place.type === "string" ? (place as Place) : undefined;
}

const isObject = (v: JsonValue | undefined): v is { [key: string]: JsonValue } =>
  typeof v === "object" && v !== null && !Array.isArray(v);
