/**
 * The config's `state:`, either `path` (one instance, state on disk; the default) or `redis`
 * (instances sharing state), and `leases:` (how those instances split the bots).
 */
import { z } from "zod";
import { REDIS_PREFIX } from "../state/_keys.ts";
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

/** What `state:` becomes: exactly one of the two stores. */
export type StateConfig =
  | { path: string; redis?: undefined; prefix?: undefined }
  | { redis: string; prefix: string; path?: undefined };

export const StateSchema = z
  .strictObject({
    path: z.string().min(1, { error: "is empty: give a directory" }).optional(),
    redis: RedisUrl.optional(),
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
