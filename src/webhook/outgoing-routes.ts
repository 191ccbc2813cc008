/**
 * The endpoint of an outgoing-webhook bot (`outgoing_webhook.path`): check the token, turn the
 * payload into the `message` event a queue would have delivered, hand it to the bot's one
 * dispatch path (`runtime.deliver`), and answer the server before its 10 s timeout.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Logger } from "pino";
import { timeoutSignal } from "../api/sleep.ts";
import { failpoint } from "../effects/failpoints.ts";
import { countAsWebhook, loggedClientAbort } from "../log/access-log.ts";
import { replyTarget } from "../pipeline/reply-target.ts";
import type { Clock } from "../time/clock.ts";
import { type EventMap, messageEventOf } from "../wire/events.ts";
import { safeEqual } from "./constant-time.ts";
import { type Delivery, HeldDeliveries } from "./held-deliveries.ts";
import { unreadableBody } from "./parse-body.ts";
import { type Answer, type Keeper, ReplyExchange } from "./reply-exchange.ts";
import { SlackLater } from "./slack-later.ts";
import { findSlackMessage, type SlackDelivery, slackDeliveryOf } from "./slack-lookup.ts";
import type { WebhookRuntime } from "./webhook-runtime.ts";

/** Logged (info) when a delivery whose handlers still run at its reply deadline is kept, before its answer. */
export const KEPT_RUNNING_LINE =
  "outgoing webhook: the handler still runs at the reply deadline; the delivery is kept as a dead letter (replayed at the next start should the process die first), then answered without a reply";
const NOT_KEPT_RUNNING_LINE =
  "outgoing webhook: could not keep a delivery whose handler still runs at the reply deadline (its dead letter was refused); its connection is closed so that the server retries it";
/** Logged (debug) when a delivery whose handler replies before it returns is kept, before the reply goes. */
export const KEPT_REPLIED_LINE =
  "outgoing webhook: the handler replied and still runs; the delivery is kept as a dead letter (replayed at the next start should the process die first), then answered with the reply";
const NOT_KEPT_REPLIED_LINE =
  "outgoing webhook: could not keep a delivery whose handler replied and still runs (the write of its dead letter failed, or its acknowledgement was lost); the reply goes all the same, and a kill before the handler returns may lose the rest of its run";
/** Logged (info) when a delivery answered before its run began (a Slack-format one found by a later lookup) is kept, before it runs. */
export const KEPT_ANSWERED_LINE =
  "outgoing webhook: a delivery answered before its message was found is kept as a dead letter (replayed at the next start should the process die first), then run";
const NOT_KEPT_ANSWERED_LINE =
  "outgoing webhook: could not keep a delivery answered before its message was found (the write of its dead letter failed, or its acknowledgement was lost); it runs all the same, and a kill before the handler returns may lose the rest of its run";
/** Logged (debug) when a delivery whose handler asks a dialog's question before its answer is kept, before the question goes. */
export const KEPT_ASKED_LINE =
  "outgoing webhook: the handler asks a dialog's question before the delivery is answered; the delivery is kept as a dead letter (replayed at the next start should the process die first), then the question is sent";
const NOT_KEPT_ASKED_LINE =
  "outgoing webhook: could not keep a delivery whose handler asks a dialog's question before its answer (the write of its dead letter failed, or its acknowledgement was lost); the question goes all the same, and a kill before the delivery is answered may lose its dialog";
const KEPT_LINES = {
  deadline: { kept: KEPT_RUNNING_LINE, refused: NOT_KEPT_RUNNING_LINE, level: "info" },
  replied: { kept: KEPT_REPLIED_LINE, refused: NOT_KEPT_REPLIED_LINE, level: "debug" },
  asked: { kept: KEPT_ASKED_LINE, refused: NOT_KEPT_ASKED_LINE, level: "debug" },
  answered: { kept: KEPT_ANSWERED_LINE, refused: NOT_KEPT_ANSWERED_LINE, level: "info" },
} as const;
const LEFT_KEPT_LINE =
  "outgoing webhook: the run of a kept delivery ended without its message recorded as handled (it timed out, or the stop cut it off): its dead letter stays, replayed at the next start";
const NOT_SETTLED_LINE =
  "outgoing webhook: could not remove the dead letter of a delivery whose run is over; the next start finds its message handled and removes it";

export interface OutgoingBot {
  runtime: WebhookRuntime;
  path: string;
  token: string;
  replyDeadlineMs: number;
  /** Set by the route: called once a reload swapped `runtime`. */
  rebound?: () => void;
}

function error(reply: FastifyReply, status: number, msg: string) {
  return reply.code(status).send({ result: "error", msg });
}

function answerUnreadable(reply: FastifyReply, unreadable: { status: number; message: string }) {
  const expected = unreadable.status === 415 ? ": expected the Zulip JSON or Slack form format" : "";
  return error(reply, unreadable.status, `${unreadable.message}${expected}`);
}

/**
 * Whether fastify read the body as text (its default parser for `text/plain`): neither JSON nor a
 * form, answered as any other content type is.
 */
const readAsText = (request: FastifyRequest) =>
  (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase() === "text/plain";

/**
 * Every error of the path, in its own shape. A body fastify could not read (too large, not valid
 * JSON, of another content type) has no token to check: it is answered first, in the inbound
 * paths' words. Any other failure is logged, and answered without its details.
 */
const answerErrors = (log: Logger) => (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
  if (loggedClientAbort(err, request, log))
    return error(reply, 400, "the connection closed before the body was read");
  const unreadable = unreadableBody(err, request.routeOptions.bodyLimit);
  if (unreadable) return answerUnreadable(reply, unreadable);
  const status = err.statusCode !== undefined && err.statusCode >= 400 ? err.statusCode : 500;
  if (status < 500) return error(reply, status, err.message);
  log.error({ err, path: request.routeOptions.url }, "outgoing webhook: the request failed");
  return error(reply, status, "internal error");
};

/** Register one POST route per outgoing-webhook bot. */
export function registerOutgoingRoutes(
  app: FastifyInstance,
  bots: readonly OutgoingBot[],
  log: Logger,
  clock: Clock,
  /** Whether a bot's start failed (and it has not started since): it is not waited for. */
  startFailed: (bot: string) => boolean = () => false,
  /** Aborted once the stop's deadline passed (at once for a stop with none): see {@link answerOrCut}. */
  stopping: AbortSignal = new AbortController().signal,
): void {
  for (const bot of bots) {
    // The deadline is read per delivery: a reload may change it.
    const exchange = new ReplyExchange(() => bot.replyDeadlineMs, clock);
    const name = bot.runtime.name;
    const blog = log.child({ bot: name });
    /**
     * Runs the handlers on `found` once per message. `arrived`: when its delivery came (the
     * deadline counts from then); undefined: the server was answered already.
     */
    const handOver = (found: OutgoingMessageEvent, arrived: number | undefined) => {
      const { answer, repeat } = exchange.answer(
        String(found.message.id),
        (reply, beforeAsking) => bot.runtime.deliver(found, { reply, repeatable: true, beforeAsking }),
        async (content) => {
          const deps = bot.runtime.contextDeps();
          const target = replyTarget(found, undefined, deps.bot.userId);
          const { id } = await deps.api.messages.send({ read_by_sender: true, ...target, content });
          return { id };
        },
        arrived === undefined ? undefined : clock.now() - arrived,
        keeperOf(found),
      );
      if (repeat) blog.info({ messageId: found.message.id }, "repeated delivery; answering as the first");
      return answer;
    };
    /** How `found` is kept when its deadline passes while its handlers run (see reply-exchange.ts). */
    const keeperOf = (found: OutgoingMessageEvent): Keeper => {
      const messageId = found.message.id;
      return {
        keep: async (again, why) => {
          const lines = KEPT_LINES[why];
          try {
            const id = await bot.runtime.keepDelivery(found, { again, running: true, why });
            if (id !== undefined) blog[lines.level]({ messageId, deadLetter: id }, lines.kept);
            return id;
          } catch (err) {
            blog.error({ err, messageId }, lines.refused);
            throw err;
          }
        },
        settle: (id) =>
          void bot.runtime.settleDelivery(id, messageId).then(
            (removed) => removed || blog.info({ messageId, deadLetter: id }, LEFT_KEPT_LINE),
            (err: unknown) => blog.warn({ err, messageId, deadLetter: id }, NOT_SETTLED_LINE),
          ),
      };
    };
    const lookUp = (slack: SlackDelivery, signal: AbortSignal) =>
      findSlackMessage(bot.runtime.contextDeps().api, slack, signal);
    const held = new HeldDeliveries({ clock, log: blog, runtime: () => bot.runtime });
    /**
     * `found` answered without a reply: handed over once the bot is ready, or replayed from its
     * dead letter, a repeat then sharing the (empty) answer of the first, as a handed-over one does.
     */
    const lateDelivery = (found: OutgoingMessageEvent): Delivery => ({
      messageId: found.message.id,
      event: found,
      run: () => void handOver(found, undefined),
      lettered: () => exchange.settled(String(found.message.id)),
    });
    bot.rebound = () => held.rebind();
    const later = new SlackLater({
      clock,
      log: blog,
      lookUp,
      unavailable: () => standbyBot(bot.runtime),
      // A bot restarting meanwhile (a reload) gets it once ready.
      deliver: (found) => {
        void held.keep(lateDelivery(found)).then((kept) => {
          if (!kept)
            blog.error(
              { messageId: found.message.id },
              "Slack-format delivery: found by a later lookup while the bot is not ready, and not kept; not handled",
            );
        });
      },
    });
    // Before the server stops: a delivery still held must not keep the close waiting; those kept
    // (answered already) are counted, their letters written.
    app.addHook("preClose", async () => held.close());
    app.addHook("onClose", async () => later.stop());
    /** A Slack-form delivery answered already: its lookup and handlers run now, replies through the API. */
    const lookUpLater = (slack: SlackDelivery) => {
      const deadline = timeoutSignal(clock, bot.replyDeadlineMs);
      lookUp(slack, deadline.signal)
        .then(
          (found) => {
            if (found) handOver(found, undefined);
            else
              blog.warn("Slack-format delivery: the message could not be found through the API; not handled");
          },
          (err: unknown) => later.start(slack, err),
        )
        .finally(() => deadline.clear());
    };
    /**
     * Why the delivery is answered 503 instead of waiting for the bot: another instance runs it (a
     * load balancer retries a 503 there, see docs/operations/instances.md), or its start failed
     * (the server's "Failure! …" message and the DM tell its owner).
     */
    const refusal = () =>
      standbyBot(bot.runtime) ??
      (startFailed(name) ? `bot ${name} could not start; see bothost's log` : undefined);
    /**
     * Wait, within what is left of the reply deadline, for a bot that is not ready (starting or
     * stopping). "go": it is ready; else the delivery was answered (kept for later, or its
     * connection closed so that the server retries it: an error status is never retried).
     */
    const whenReady = async (
      arrived: number,
      reply: FastifyReply,
      late: Delivery,
    ): Promise<"go" | "answered"> => {
      const { messageId } = late;
      if (held.ready()) return "go";
      blog.info({ messageId }, "outgoing webhook: delivery held until the bot is ready");
      const outcome = await held.wait(bot.replyDeadlineMs - (clock.now() - arrived));
      if (outcome === "ready") return "go";
      const refused = outcome === "late" ? refusal() : undefined;
      if (refused) {
        error(reply, 503, refused);
        return "answered";
      }
      // Kept (its letter written) before it is answered: a kill after the answer loses nothing.
      if (outcome === "late" && (await held.keep(late))) {
        blog.info(
          { messageId },
          "outgoing webhook: the bot is not ready by the reply deadline; answered without a reply, handled once it is",
        );
        reply.send({ response_not_required: true });
        return "answered";
      }
      blog.info(
        { messageId },
        "outgoing webhook: delivery not taken; its connection is closed so that the server retries it",
      );
      hangUp(reply);
      return "answered";
    };
    // A test's kill as an answer goes out (see failpoints.ts).
    const onSend = async () => failpoint("answer-sending");
    app.post(bot.path, { errorHandler: answerErrors(blog), onSend }, async (request, reply) => {
      const arrived = clock.now();
      countAsWebhook(request, bot.path);
      // The token first: a caller without it learns nothing of what the path takes (a body that
      // could not be read, which has no token to check, was answered before: see answerErrors).
      if (readAsText(request))
        return answerUnreadable(reply, unreadableBody({ code: "FST_ERR_CTP_INVALID_MEDIA_TYPE" }, 0)!);
      const body = request.body;
      const token =
        typeof body === "object" && body !== null ? (body as { token?: unknown }).token : undefined;
      if (typeof token !== "string" || !safeEqual(token, bot.token)) {
        blog.warn(
          { path: bot.path },
          "outgoing webhook refused: the token does not match the configured one",
        );
        return error(reply, 401, "Unauthorized: the token does not match this bot's outgoing_webhook token");
      }
      const payload = readOutgoingPayload(request.body);
      if (!payload) {
        return error(
          reply,
          400,
          "not an outgoing-webhook payload: expected the Zulip JSON or Slack form format",
        );
      }
      const refused = refusal();
      if (refused) return error(reply, 503, refused);
      if (payload.issue !== undefined) return error(reply, 400, payload.issue);
      let event: OutgoingMessageEvent | undefined;
      if (payload.format === "zulip") {
        event = payload.event;
        const go = await whenReady(arrived, reply, lateDelivery(event));
        if (go === "answered") return reply;
      } else {
        const slack = payload.slack;
        const late = { messageId: undefined, run: () => lookUpLater(slack) };
        if ((await whenReady(arrived, reply, late)) === "answered") return reply;
        if (later.has(slack)) {
          blog.info("repeated Slack-format delivery; its message is being looked up again already");
          return { response_not_required: true };
        }
        const deadline = timeoutSignal(clock, Math.max(0, bot.replyDeadlineMs - (clock.now() - arrived)));
        try {
          event = await lookUp(slack, deadline.signal);
        } catch (err) {
          // An error status or no answer in time would make the server post "Failure! …".
          later.start(slack, err);
          return { response_not_required: true };
        } finally {
          deadline.clear();
        }
        if (!event) {
          blog.warn("Slack-format delivery: the message could not be found through the API; not handled");
          return { response_not_required: true };
        }
        // The bot may have begun to stop during the lookup: the delivery waits for it again.
        const go = await whenReady(arrived, reply, lateDelivery(event));
        if (go === "answered") return reply;
      }
      const answer = await answerOrCut(handOver(event, arrived), stopping);
      if (answer === undefined) blog.warn({ messageId: event.message.id }, CUT_LINE);
      if (answer === undefined || answer.refused) return hangUp(reply);
      return render(answer, payload.format);
    });
  }
}

/** Why another instance answers this bot's deliveries (503), or undefined when this one does. */
function standbyBot(runtime: WebhookRuntime): string | undefined {
  return runtime.status.state === "standby"
    ? `bot ${runtime.name} runs on another instance now; try again`
    : undefined;
}

const CUT_LINE =
  "outgoing webhook: the stop's deadline passed before the delivery was answered; its connection is closed, so that the server sends it again";

/**
 * The delivery's answer; undefined when the stop's deadline (`stopping`) comes first: the listener
 * would otherwise wait for the answer up to the reply deadline, past the stop's own (a crash's
 * included). The run goes on until the stop cuts it (kept then for the next start, see
 * webhook-runtime.ts), and the server's retry meets it there through the delivery ledger.
 */
function answerOrCut(answer: Promise<Answer>, stopping: AbortSignal): Promise<Answer | undefined> {
  return new Promise((resolve, reject) => {
    const cut = () => resolve(undefined);
    if (stopping.aborted) return cut();
    stopping.addEventListener("abort", cut, { once: true });
    answer.then(resolve, reject).finally(() => stopping.removeEventListener("abort", cut));
  });
}

/** No answer: the connection is closed, so that the server retries the delivery (an error status it never retries). */
function hangUp(reply: FastifyReply): FastifyReply {
  reply.hijack();
  reply.raw.destroy();
  return reply;
}

function render(answer: Answer, format: "zulip" | "slack"): Record<string, unknown> {
  if (answer.content === undefined) return { response_not_required: true };
  return format === "zulip" ? { content: answer.content } : { text: answer.content };
}

/** A `message` event built from a payload, as the bot's queue would have delivered it (without the queue's id). */
type OutgoingMessageEvent = EventMap["message"];

type OutgoingPayload =
  | { format: "zulip"; event: OutgoingMessageEvent; issue?: undefined }
  | { format: "slack"; slack: SlackDelivery; issue?: undefined }
  /** Malformed: what is wrong, answered 400. */
  | { format: "zulip" | "slack"; issue: string };

/**
 * What the chat server POSTs (see docs/internals/server-behaviour.md#outgoing-webhooks), in either
 * format: the Zulip JSON body (with the whole message) or the Slack-compatible form (a few fields,
 * no message id). Told apart by shape: only the Zulip one carries a `message` object.
 */
function readOutgoingPayload(body: unknown): OutgoingPayload | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  const b = body as Record<string, unknown>;
  if ("message" in b) {
    // Only a real mention triggers a channel message; a DM trigger carries no mention flag.
    const flags = b.trigger === "mention" ? ["mentioned"] : [];
    const { event, issue } = messageEventOf(b.message, flags);
    return event
      ? { format: "zulip", event }
      : { format: "zulip", issue: `the payload's message is malformed: ${issue}` };
  }
  if ("text" in b || "channel_id" in b) {
    const { delivery, issue } = slackDeliveryOf(b);
    return delivery
      ? { format: "slack", slack: delivery }
      : { format: "slack", issue: `the Slack-format payload is malformed: ${issue}` };
  }
  return undefined;
}
