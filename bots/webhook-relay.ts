/**
 * webhook-relay: turn an inbound webhook (GitHub, CI, monitoring…) into a channel message, with
 * the topic and content written as templates over the request. Needs `http.listen`; the webhook
 * is served at `POST /webhooks/<bot name>/<webhook>`.
 *
 * Config:
 * ```yaml
 * http: { listen: 127.0.0.1:8080 }
 * bots:
 *   github-relay:
 *     module: bothost/bots/webhook-relay.ts   # or ./bots/webhook-relay.ts in a checkout
 *     email: relay-bot@chat.example.org
 *     api_key: ${RELAY_BOT_API_KEY}
 *     settings:
 *       webhook: github                        # → POST /webhooks/github-relay/github
 *       verify: { type: github, secret: "${GITHUB_WEBHOOK_SECRET}" }
 *       idempotencyHeader: X-GitHub-Delivery   # drop GitHub's redeliveries
 *       channel: dev
 *       topic: "{{body.repository.name}}"
 *       content: "{{body.sender.login}} {{body.action | pushed}}: {{body.pull_request.html_url}}"
 * ```
 *
 * Placeholders are `{{path}}` into `body` (the parsed JSON or form body), `headers` (lower-case
 * names) and `query`; `{{path | fallback}}` gives text for a missing value. Nothing is evaluated.
 * An empty topic becomes `topicFallback`; topics longer than the server allows are shortened.
 */
import { defineBot, parseTemplate, renderTemplate } from "bothost";
import { z } from "zod";

const ROOTS = ["body", "headers", "query"];

/**
 * A template over the request: each placeholder's path starts at one of {@link ROOTS}, so that a
 * `{{repository.name}}` (without `body.`), which would always render empty, is refused at load.
 */
const template = z
  .string()
  .min(1)
  .superRefine((text, ctx) => {
    const { paths, legacy, problems } = parseTemplate(text);
    const outside = paths.filter((p) => !ROOTS.includes(p.split(".")[0]!));
    for (const path of outside)
      ctx.addIssue({
        code: "custom",
        message: `uses {{${path}}}: a path starts with body., headers. or query. (as {{body.${path}}})`,
      });
    // The old single-brace spellings (listed first) are not reported: a `{` here is text.
    for (const message of problems.slice(legacy.length)) ctx.addIssue({ code: "custom", message });
  });

const secret = z.string().min(8, { error: "is too short: use a secret of at least 8 characters" });

const Verify = z.discriminatedUnion("type", [
  z.object({ type: z.literal("github"), secret }),
  z.object({
    type: z.literal("hmac"),
    secret,
    header: z.string().min(1).optional(),
    timestampHeader: z.string().min(1).optional(),
    toleranceSeconds: z.number().int().positive().max(86_400).optional(),
  }),
  z.object({ type: z.literal("bearer"), token: secret }),
  z.object({ type: z.literal("secret"), secret, header: z.string().min(1).optional() }),
  z.object({ type: z.literal("none") }),
]);

export default defineBot({
  settings: z.object({
    /** The webhook's name: the last part of its URL. */
    webhook: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, { error: 'must be 1-64 lowercase letters, digits, "_" or "-"' })
      .default("relay"),
    /** How requests are authenticated; `none` only behind something that does it for you. */
    verify: Verify,
    /** A request header holding a delivery id; repeats of an id are dropped. */
    idempotencyHeader: z.string().min(1).optional(),
    /** Largest body accepted, in bytes (default: http.body_limit). */
    maxBodyBytes: z.number().int().positive().optional(),
    /** The channel to post in (name or id). */
    channel: z.union([z.string().min(1), z.number().int().positive()]),
    /** Topic template. */
    topic: template,
    /** Used when the topic template renders empty. */
    topicFallback: z.string().min(1).default("webhook"),
    /** Message template (Markdown). */
    content: template,
  }),
  setup(bot, settings) {
    bot.webhook(
      settings.webhook,
      {
        verify: settings.verify,
        ...(settings.idempotencyHeader ? { idempotencyHeader: settings.idempotencyHeader } : {}),
        ...(settings.maxBodyBytes ? { maxBodyBytes: settings.maxBodyBytes } : {}),
      },
      async (ctx) => {
        const scope = { body: ctx.request.body, headers: ctx.request.headers, query: ctx.request.query };
        const rendered = renderTemplate(settings.topic, scope).replace(/\s+/g, " ").trim();
        const max = ctx.server.maxTopicLength;
        const chars = [...(rendered || settings.topicFallback)];
        const topic = chars.length > max ? `${chars.slice(0, max - 1).join("")}…` : chars.join("");
        const content = renderTemplate(settings.content, scope).trim() || "(empty webhook message)";
        const { id } = await ctx.send({ type: "channel", to: settings.channel, topic, content });
        ctx.log.info({ messageId: id }, "webhook relayed");
        return { relayed: id };
      },
    );
  },
});
