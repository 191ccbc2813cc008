/**
 * The endpoint of an outgoing-webhook bot (`outgoing_webhook.path`): check the token, turn the
 * payload into the `message` event a queue would have delivered, hand it to the bot's one
 * dispatch path (`runtime.deliver`), and answer the server before its 10 s timeout.
 */
import type { FastifyInstance, FastifyReply } from "fastify";
import type { Logger } from "pino";
import { countAsWebhook } from "../log/access-log.ts";
import { replyTarget } from "../pipeline/reply-target.ts";
import { safeEqual } from "./constant-time.ts";
import { findSlackMessage, type OutgoingMessageEvent, readOutgoingPayload } from "./outgoing-payload.ts";
import { type Answer, ReplyExchange } from "./reply-exchange.ts";
import type { WebhookRuntime } from "./webhook-runtime.ts";

export interface OutgoingBot {
  runtime: WebhookRuntime;
  path: string;
  token: string;
  replyDeadlineMs: number;
}

function error(reply: FastifyReply, status: number, msg: string) {
  return reply.code(status).send({ result: "error", msg });
}

/** Register one POST route per outgoing-webhook bot. */
export function registerOutgoingRoutes(
  app: FastifyInstance,
  bots: readonly OutgoingBot[],
  log: Logger,
): void {
  for (const bot of bots) {
    const exchange = new ReplyExchange({ deadlineMs: bot.replyDeadlineMs });
    const name = bot.runtime.name;
    const blog = log.child({ bot: name });
    app.post(bot.path, async (request, reply) => {
      countAsWebhook(request, bot.path);
      const payload = readOutgoingPayload(request.body);
      if (!payload) {
        return error(
          reply,
          400,
          "not an outgoing-webhook payload: expected the Zulip JSON or Slack form format",
        );
      }
      if (typeof payload.token !== "string" || !safeEqual(payload.token, bot.token)) {
        blog.warn(
          { path: bot.path },
          "outgoing webhook refused: the token does not match the configured one",
        );
        return error(reply, 401, "Unauthorized: the token does not match this bot's outgoing_webhook token");
      }
      if (bot.runtime.status.state === "standby") {
        return error(reply, 503, `bot ${name} runs on another instance now; try again`);
      }
      if (bot.runtime.status.state !== "webhook") {
        return error(reply, 503, `bot ${name} is starting; try again`);
      }
      let event: OutgoingMessageEvent | undefined;
      if (payload.format === "zulip") {
        if (!payload.event) return error(reply, 400, `the payload's message is malformed: ${payload.issue}`);
        event = payload.event;
      } else {
        const client = bot.runtime.contextDeps().api;
        event = await findSlackMessage(client, payload.slack, AbortSignal.timeout(bot.replyDeadlineMs));
        if (!event) {
          blog.warn("Slack-format delivery: the message could not be found through the API; not handled");
          return { response_not_required: true };
        }
      }
      const found = event;
      const { answer, repeat } = exchange.answer(
        String(found.message.id),
        (replyFn) => bot.runtime.deliver(found, { reply: replyFn }),
        async (content) => {
          const deps = bot.runtime.contextDeps();
          const target = replyTarget(found, deps.bot.userId);
          const { id } = await deps.api.messages.send({ read_by_sender: true, ...target, content });
          return { id };
        },
      );
      if (repeat) blog.info({ messageId: found.message.id }, "repeated delivery; answering as the first");
      return render(await answer, payload.format);
    });
  }
}

function render(answer: Answer, format: "zulip" | "slack"): Record<string, unknown> {
  if (answer.content === undefined) return { response_not_required: true };
  return format === "zulip" ? { content: answer.content } : { text: answer.content };
}
