/**
 * The config file's schema: the single source of truth for keys, types and defaults.
 */
import { z } from "zod";
import {
  BOT_NAME,
  duration,
  Email,
  EventTypeName,
  ListenAddress,
  Narrow,
  Port,
  ServerUrl,
  WEBHOOK_NAME,
} from "./schema-fields.ts";
import { LeasesSchema, StateSchema } from "./state-schema.ts";

/** `longpoll_margin` when the config does not set it. */
export const DEFAULT_LONGPOLL_MARGIN_MS = 10_000;

/**
 * How long an inbound webhook keeps a request's idempotency key, and what its runs recorded under
 * it, when the config does not say: 3 days, as long as Stripe retries a delivery and GitHub
 * redelivers one (Svix and standard-webhooks senders retry for about 28 hours).
 */
export const DEFAULT_IDEMPOTENCY_WINDOW_MS = 3 * 86_400_000;

/** Log levels, quietest last. */
export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;

const wholeNumber = (min: number, max: number, what: string) =>
  z
    .number()
    .int()
    .min(min, { error: `must be at least ${min} (${what})` })
    .max(max, { error: `must be at most ${max} (${what})` });

const nonEmpty = (what: string) => z.string().min(1, { error: `is empty: ${what}` });

/** A chat server: its URL, or `"sandbox"` to start the embedded test server in-process. */
export const ServerSchema = z.strictObject({
  url: ServerUrl,
  /** Only with `url: sandbox`. */
  sandbox: z
    .strictObject({
      /** A YAML file describing the organisation to start with (users, bots, channels). */
      org: nonEmpty("give a path to an org file, or remove the key").optional(),
      port: Port.default(0),
    })
    .optional(),
});

/** One bot: its module, identity, credentials, subscription and limits. */
export const BotSchema = z.strictObject({
  module: nonEmpty("give a file like ./bots/my-bot.ts, or a package name"),
  email: Email.optional(),
  api_key: nonEmpty("set the bot's API key")
    .regex(/^\S+$/, { error: "contains spaces or line breaks: give the API key alone" })
    .optional(),
  api_key_file: nonEmpty("give the path of a file holding the API key").optional(),
  zuliprc: nonEmpty("give the path of the bot's zuliprc file").optional(),
  server: ServerSchema.optional(),
  events: z
    .array(EventTypeName)
    .min(1, { error: "is empty: list event types, or remove it to use the module's" })
    .optional(),
  narrow: Narrow.optional(),
  all_public_streams: z.boolean().optional(),
  own_messages: z.boolean().default(false),
  concurrency: wholeNumber(1, 1000, "conversations handled in parallel").default(8),
  handler_timeout: duration({ min: 1 }).default(30_000),
  replay: z
    .strictObject({
      max_messages: wholeNumber(0, 1_000_000, "0 turns catch-up off").default(1_000),
      max_age: duration().default(86_400_000),
    })
    .prefault({}),
  outgoing_webhook: z
    .strictObject({
      path: z
        .string()
        .regex(/^\/[^\s?#]*$/, { error: 'must be a URL path starting with /, like "/hooks/helper"' }),
      token: nonEmpty("set the token the server shows for the outgoing webhook bot"),
      /** Answer the server within this time (its own timeout is 10 s); later replies go through the API. */
      reply_deadline: duration({ min: 1, max: 10_000 }).default(8_000),
    })
    .optional(),
  /**
   * Capture the bot's writes (sends, reports, reactions, bookings…) instead of making them: each
   * is logged and the latest are shown in `bothost status` and on the status page. Reads go on.
   */
  dry_run: z.boolean().default(false),
  /** Content over the server's max_message_length: split into several messages, or reject it. */
  long_messages: z.enum(["split", "reject"]).default("split"),
  /** Commands (`bot.command`) also run from any message that starts with this, e.g. `"!"`. */
  command_prefix: z
    .string()
    .regex(
      /^[^\s\w@*`]{1,3}$/,
      'must be 1 to 3 characters, none a letter, digit, _, space, @, * or `, like "!"',
    )
    .optional(),
  /**
   * A handler that throws is run again after `backoff`, doubling up to `max_backoff`, until it has
   * run `attempts` times; then its event becomes a dead letter (at most `dead_letters` kept).
   */
  retries: z
    .strictObject({
      attempts: wholeNumber(1, 100, "runs of a failing handler, the first included").default(5),
      backoff: duration({ min: 1 }).default(2_000),
      max_backoff: duration({ min: 1 }).default(30_000),
      dead_letters: wholeNumber(1, 1_000_000, "dead letters kept for this bot").default(1_000),
    })
    .prefault({}),
  /**
   * The account's rate-limit rules, where an administrator changed them from the server's default
   * (responses report only the hourly figure): calls per minute and per hour, for the event queue
   * and for the other calls each. bothost paces its polls and waits its calls to stay within them.
   */
  rate_limit: z
    .strictObject({
      per_minute: wholeNumber(1, 1_000_000, "calls a minute the server allows the account").default(200),
      per_hour: wholeNumber(1, 100_000_000, "calls an hour the server allows the account").default(2_000),
    })
    .prefault({}),
  /**
   * The bot's inbound webhooks (`bot.webhook(name, …)`), by name: how long a keyed request is
   * remembered, so that the sender's retry repeats none of its sends, state writes and external
   * calls; how long its sender waits for an answer (default 10 s, GitHub's; Slack's is 3 s).
   */
  webhooks: z
    .record(
      z.string().regex(WEBHOOK_NAME),
      z.strictObject({
        idempotency_window: duration({ min: 3_600_000, max: 30 * 86_400_000 }).default(
          DEFAULT_IDEMPOTENCY_WINDOW_MS,
        ),
        sender_timeout: duration({ min: 1_000, max: 3_600_000 }).optional(),
      }),
    )
    .optional(),
  settings: z.unknown().optional(),
});

/** The whole config file. `Config` (what `loadConfig` returns) is derived from it. */
export const ConfigSchema = z.strictObject({
  server: ServerSchema.optional(),
  /** `path` (one instance, state on disk) or `redis` (instances sharing state): see state-schema.ts. */
  state: StateSchema,
  /** Only with `state.redis`: how instances share the bots. */
  leases: LeasesSchema.optional(),
  http: z
    .strictObject({
      listen: ListenAddress,
      /** Largest request body in bytes (an inbound webhook may declare its own `maxBodyBytes`). */
      body_limit: wholeNumber(1024, 104_857_600, "bytes").default(1_048_576),
      /** Time allowed to receive a whole request. */
      request_timeout: duration({ min: 1 }).default(30_000),
      /**
       * Bearer token for the admin routes (`/admin/…`, used by `bothost failed`). Without it they
       * answer only when `listen` is a loopback address.
       */
      admin_token: z
        .string()
        .min(16, { error: "is too short: use at least 16 random characters (e.g. openssl rand -hex 24)" })
        .optional(),
    })
    .optional(),
  log: z
    .strictObject({
      level: z.enum(LOG_LEVELS).default("info"),
      pretty: z
        .union([z.boolean(), z.literal("auto")], { error: 'must be true, false or "auto"' })
        .default("auto"),
    })
    .prefault({}),
  shutdown_timeout: duration().default(10_000),
  registration_concurrency: wholeNumber(1, 64, "bots registering queues at once").default(4),
  /**
   * Added to the server's long-poll timeout to make a poll's HTTP timeout: a poll unanswered that
   * long is hung, and the bot registers a new queue.
   */
  longpoll_margin: duration({ min: 1 }).default(DEFAULT_LONGPOLL_MARGIN_MS),
  bots: z
    .record(z.string(), BotSchema)
    // Names are checked beside the bots, not as the record's keys: a key zod refuses leaves its
    // bot unread, and a bad name would hide every other mistake in that bot.
    .superRefine(checkBotNames, { when: () => true })
    .refine((bots) => Object.keys(bots).length > 0, {
      error: "has no bots: add at least one, with its module, email and api_key (see config.example.yaml)",
    }),
});

/** What a bot's `outgoing_webhook` needs when the config has no `http`. */
export const LISTENER_NEEDED =
  'needs the HTTP listener: add `http: { listen: "127.0.0.1:8080" }` to the config';

/** A bot with an outgoing webhook in a config without the HTTP listener: refused where it is set. */
export function checkListener(
  config: { http?: unknown; bots: Record<string, { outgoing_webhook?: unknown }> },
  ctx: { addIssue(issue: z.core.$ZodRawIssue): void },
): void {
  if (config.http !== undefined) return;
  for (const [name, bot] of Object.entries(config.bots)) {
    if (bot.outgoing_webhook === undefined) continue;
    ctx.addIssue({
      code: "custom",
      path: ["bots", name, "outgoing_webhook"],
      input: bot.outgoing_webhook,
      message: LISTENER_NEEDED,
    });
  }
}

function checkBotNames(bots: unknown, ctx: z.RefinementCtx): void {
  if (bots === null || typeof bots !== "object" || Array.isArray(bots)) return;
  for (const name of Object.keys(bots)) {
    if (BOT_NAME.test(name) && name.length <= 64) continue;
    ctx.addIssue({ code: "invalid_key", origin: "record", issues: [], input: name, path: [name] });
  }
}

type DeepReadonly<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends readonly (infer U)[]
    ? readonly DeepReadonly<U>[]
    : T extends object
      ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
      : T;

/** What the config file says, after defaults (durations in milliseconds). */
export type ConfigFile = z.infer<typeof ConfigSchema>;

/**
 * One bot, resolved: `server` is the bot's own, else the top-level one, else its zuliprc's site;
 * `email` and `api_key` come from the config, `api_key_file` or `zuliprc`. Paths are absolute.
 */
export type BotConfig = DeepReadonly<
  Omit<ConfigFile["bots"][string], "server" | "email" | "api_key"> & {
    server: z.infer<typeof ServerSchema>;
    email: string;
    api_key: string;
  }
>;

/** The loaded, validated, frozen config (see {@link ConfigSchema} and {@link BotConfig}). */
export type Config = DeepReadonly<Omit<ConfigFile, "bots"> & { bots: Record<string, BotConfig> }>;
