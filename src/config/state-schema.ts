/**
 * The config's `state:`, either `path` (one instance, state on disk; the default) or `redis`
 * (instances sharing state), and `leases:` (how those instances split the bots).
 */
import { z } from "zod";
import { REDIS_PREFIX } from "../state/_keys.ts";
import type { RedisTarget } from "../state/redis-url.ts";
import { duration } from "./schema-fields.ts";

export const stateDefaults = {
  path: "./.bothost",
  redisPrefix: "bothost",
  leaseTtlMs: 15_000,
} as const;

/** `redis://[:password@]host[:port][/db]` or `rediss://…`; messages never repeat the value. */
const RedisUrl = z.string().superRefine((text, ctx) => {
  const url = URL.canParse(text) ? new URL(text) : undefined;
  const problem =
    url === undefined
      ? "is not a URL: write redis://host:6379/0 (rediss:// for TLS; a password goes in as redis://:password@host:6379/0)"
      : url.protocol !== "redis:" && url.protocol !== "rediss:"
        ? `uses ${url.protocol.replace(/:$/, "")}://: write redis://host:6379/0, or rediss:// for TLS`
        : url.hostname === ""
          ? "has no host: write redis://host:6379/0"
          : !/^\/?\d*$/.test(url.pathname)
            ? "has a path that is not a database number: write redis://host:6379/0"
            : undefined;
  if (problem !== undefined) ctx.addIssue({ code: "custom", input: text, message: problem });
});

/** `host:port` of one Sentinel; IPv6 hosts in brackets. */
const HostPort = z.string().regex(/^(\[[0-9a-fA-F:.]+\]|[^\s:/[\]]+):\d{1,5}$/, {
  error: 'is not host:port: write each Sentinel like "10.0.0.1:26379"',
});

/** `state.redis` as Sentinel: the Sentinels to ask and the master group they watch. */
const RedisSentinel = z
  .strictObject({
    sentinels: z
      .array(HostPort)
      .min(1, { error: 'is empty: list the Sentinels, like ["10.0.0.1:26379", "10.0.0.2:26379"]' }),
    name: z.string().min(1, { error: "is empty: give the master group's name (sentinel monitor <name> …)" }),
    db: z
      .number({ error: "must be a database number (0 to 65535)" })
      .int({ error: "must be a whole database number (0 to 65535)" })
      .min(0, { error: "must be a database number from 0 to 65535" })
      .max(65_535, { error: "must be a database number from 0 to 65535" })
      .optional(),
    password: z.string().min(1, { error: "is empty: give the password, or remove the key" }).optional(),
    sentinel_password: z
      .string()
      .min(1, { error: "is empty: give the password, or remove the key" })
      .optional(),
    tls: z.boolean().optional(),
  })
  .transform(
    (s): RedisTarget => ({
      sentinels: s.sentinels,
      name: s.name,
      ...(s.db !== undefined ? { db: s.db } : {}),
      ...(s.password !== undefined ? { password: s.password } : {}),
      ...(s.sentinel_password !== undefined ? { sentinelPassword: s.sentinel_password } : {}),
      ...(s.tls !== undefined ? { tls: s.tls } : {}),
    }),
  );

/** Keys of a single Redis's mapping in other tools' configs, which `state.redis` takes as a URL. */
const SINGLE_REDIS_KEYS = ["url", "host", "port"] as const;

/**
 * `state.redis`: the URL, or the Sentinel mapping. A mapping with `url`, `host` or `port` and no
 * `sentinels` is a single Redis written as other tools write it: one problem at that key saying to
 * give the URL itself, not the Sentinel fields it lacks.
 */
const RedisTargetSchema = z.preprocess(
  (value, ctx) => {
    if (value === null || typeof value !== "object" || Array.isArray(value) || "sentinels" in value)
      return value;
    const key = SINGLE_REDIS_KEYS.find((k) => k in value);
    if (key === undefined) return value;
    ctx.addIssue({
      code: "custom",
      path: [key],
      input: value,
      message:
        key === "url"
          ? "is not a key here: give the URL as the value of redis itself (redis: redis://host:6379/0); a mapping is for Sentinel (sentinels and name)"
          : "is not a key here: give host and port as a URL, the value of redis itself (redis: redis://host:6379/0); a mapping is for Sentinel (sentinels and name)",
    });
    return z.NEVER;
  },
  z.union([RedisUrl, RedisSentinel]),
);

/** What `state:` becomes: exactly one of the two stores. */
export type StateConfig =
  | { path: string; redis?: undefined; prefix?: undefined }
  | { redis: RedisTarget; prefix: string; path?: undefined };

export const StateSchema = z
  .strictObject({
    path: z.string().min(1, { error: "is empty: give a directory" }).optional(),
    redis: RedisTargetSchema.optional(),
    prefix: z
      .string()
      .regex(REDIS_PREFIX, { error: 'must be 1 to 64 letters, digits, "_", "." or "-" (like bothost)' })
      .optional(),
  })
  .superRefine((s, ctx) => {
    if (s.path !== undefined && s.redis !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["redis"],
        input: s.redis,
        message:
          "cannot be used together with state.path: keep path for one instance with its state on disk, or redis for instances sharing their state",
      });
    }
    if (s.prefix !== undefined && s.redis === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["prefix"],
        input: s.prefix,
        message: "only applies to state.redis: add redis: redis://host:6379/0, or remove prefix",
      });
    }
  })
  .transform(
    (s): StateConfig =>
      s.redis !== undefined
        ? { redis: s.redis, prefix: s.prefix ?? stateDefaults.redisPrefix }
        : { path: s.path ?? stateDefaults.path },
  )
  .prefault({});

/** `leases:` (only with `state.redis`): a bot whose instance died moves to another after `ttl`. */
export const LeasesSchema = z.strictObject({
  ttl: duration({ min: 1_000 }).default(stateDefaults.leaseTtlMs),
});

/** Issues for a config whose `leases:` has no Redis store to live in. */
export function checkLeases(
  config: { state: StateConfig; leases?: unknown },
  ctx: { addIssue(issue: z.core.$ZodRawIssue): void },
): void {
  if (config.leases !== undefined && config.state.redis === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["leases"],
      input: config.leases,
      message:
        "needs state.redis: leases share bots between instances through Redis; add state.redis, or remove leases",
    });
  }
}
