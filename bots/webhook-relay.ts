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
 *
 * A sender whose delivery id is in the body (Stripe's event id, signed anew on each retry) sets
 * `idempotencyKey: body.id` instead of `idempotencyHeader`: the same path as in a placeholder.
 * A request without a value there has no key; one whose value is no string or safe integer is
 * refused (400), so that a wrong path is seen rather than relaying every retry again.
 *
 * A JSON body must be an object: `null`, an array, a string or a number is refused (422, "the body
 * must be a JSON object, not …") and nothing is posted.
 */
import { BothostError, channelSetting, defineBot, parseTemplate, renderTemplate } from "bothost";
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

/**
 * Where a request's idempotency key is read: a path into `body` or `query`, written as inside a
 * placeholder (`body.id`, `body.data.object.id`). A header has its own setting, `idempotencyHeader`.
 */
const keyPath = z.string().superRefine((path, ctx) => {
  const problem = keyPathProblem(path);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

function keyPathProblem(path: string): string | undefined {
  const inner = /^\{\{([^}]*)\}\}$/.exec(path)?.[1]?.split("|")[0]?.trim();
  if (inner !== undefined) return `is a path, not a template: write ${inner} without the braces`;
  // The placeholder grammar: it reads exactly this path, or the path is no path at all.
  if (parseTemplate(`{{${path}}}`).paths[0] !== path)
    return `"${path}" is no path: write dot-separated keys, as body.id or body.data.object.id`;
  const [root, ...rest] = path.split(".");
  if (root === "headers")
    return `reads a header: set idempotencyHeader: ${rest.join(".")} instead (its name, any case)`;
  if (root !== "body" && root !== "query")
    return `starts with ${root}: a path starts with body. or query. (as body.${path})`;
  if (rest.length === 0) return `names the whole ${root}: name a field in it, as ${root}.id`;
  const forbidden = rest.find((key) => FORBIDDEN.includes(key));
  if (forbidden) return `uses ${forbidden}, which is never read: name the field that holds the id`;
  return undefined;
}

const FORBIDDEN = ["__proto__", "prototype", "constructor"];

/**
 * The key at `path` of a verified request: undefined when it has no value there (missing, null or
 * ""), as a request without the declared header; a string, or a safe integer as its digits. Any
 * other value throws, and the request is refused (400): a retry relayed again is what the setting
 * prevents, and a larger number may have lost digits in parsing, so two ids could share a key.
 */
function keyAt(request: Record<string, unknown>, path: string): string | undefined {
  let value: unknown = request;
  for (const key of path.split(".")) {
    if (value === null || typeof value !== "object" || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value === "string") return value;
  if (Number.isSafeInteger(value)) return String(value);
  const what = Array.isArray(value)
    ? "an array"
    : typeof value === "number"
      ? "a number beyond 2^53 or not an integer"
      : typeof value === "object"
        ? "an object"
        : `a ${typeof value}`;
  throw new BothostError(
    "WEBHOOK_KEY_UNREADABLE",
    `settings.idempotencyKey: ${path} is ${what}, not a string or an integer`,
  );
}

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
  z.object({
    type: z.literal("slack"),
    secret,
    toleranceSeconds: z.number().int().positive().max(86_400).optional(),
  }),
  z.object({ type: z.literal("bearer"), token: secret }),
  z.object({ type: z.literal("secret"), secret, header: z.string().min(1).optional() }),
  z.object({ type: z.literal("none") }),
]);

export default defineBot({
  settings: z
    .object({
      /** The webhook's name: the last part of its URL. */
      webhook: z
        .string()
        .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, { error: 'must be 1-64 lowercase letters, digits, "_" or "-"' })
        .default("relay"),
      /** How requests are authenticated; `none` only behind something that does it for you. */
      verify: Verify,
      /** A request header holding a delivery id; repeats of an id are dropped. */
      idempotencyHeader: z.string().min(1).optional(),
      /** Or the path of the delivery id in the body (`body.id` for Stripe); repeats of an id are dropped. */
      idempotencyKey: keyPath.optional(),
      /** Largest body accepted, in bytes (default: http.body_limit). */
      maxBodyBytes: z.number().int().positive().optional(),
      /** The channel to post in (name or id). */
      channel: channelSetting(),
      /** Topic template. */
      topic: template,
      /** Used when the topic template renders empty. */
      topicFallback: z.string().min(1).default("webhook"),
      /** Message template (Markdown). */
      content: template,
    })
    .superRefine((settings, ctx) => {
      if (settings.idempotencyHeader !== undefined && settings.idempotencyKey !== undefined)
        ctx.addIssue({
          code: "custom",
          path: ["idempotencyKey"],
          message:
            "is set with idempotencyHeader: a request's key is read from one place, so set one of them",
        });
    }),
  setup(bot, settings) {
    const keyAtPath = settings.idempotencyKey;
    bot.webhook(
      settings.webhook,
      {
        verify: settings.verify,
        // A JSON body that is no object (`null`, an array, a string) is a sender's mistake: its
        // placeholders would all render empty, so it is refused (422), not relayed.
        objectBody: true,
        ...(settings.idempotencyHeader ? { idempotencyHeader: settings.idempotencyHeader } : {}),
        ...(keyAtPath ? { idempotencyKey: (request) => keyAt(request, keyAtPath) } : {}),
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
