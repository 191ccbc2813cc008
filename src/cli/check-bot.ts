/**
 * One bot's pre-flight check for `bothost check`: who the server says the bot is (GET /users/me)
 * and what the server is (GET /server_settings), with the reason in words when either fails.
 * Nothing is changed on the server: no queue is registered, nothing is sent.
 */
import { createClient } from "../api/create-client.ts";
import { isAuthError } from "../api/errors.ts";
import { isBothostError } from "../errors/bothost-error.ts";

/** What `bothost check` learned about one bot. Never holds the API key. */
export interface BotCheck {
  name: string;
  /** The email in the config. */
  email: string;
  /** The server's base URL. */
  url: string;
  userId?: number;
  isBot?: boolean;
  version?: string;
  featureLevel?: number;
  /** Why this bot cannot run as configured; undefined when it can. */
  problem?: string;
  /** The server rejected the bot's credentials (a 401), or the account does not exist. */
  authFailed: boolean;
}

export interface BotCheckTarget {
  name: string;
  url: string;
  email: string;
  apiKey: string;
}

/** Calls are short and retried once: a check should answer in seconds, even when a server is down. */
const CALL = { timeoutMs: 10_000, retry: { maxAttempts: 2, baseDelayMs: 250 } } as const;

/**
 * Check one bot against its server.
 *
 * @example
 * ```ts
 * const result = await checkBot({ name: "echo", url, email, apiKey });
 * if (result.problem) console.error(`${result.name}: ${result.problem}`);
 * ```
 */
export async function checkBot(target: BotCheckTarget): Promise<BotCheck> {
  const result: BotCheck = { name: target.name, email: target.email, url: target.url, authFailed: false };
  let client: ReturnType<typeof createClient>;
  try {
    client = createClient({ url: target.url, email: target.email, apiKey: target.apiKey, ...CALL });
  } catch (err) {
    return { ...result, problem: describe(err) };
  }
  const [settings, me] = await Promise.allSettled([client.server.settings(), client.users.me()]);
  if (settings.status === "fulfilled") {
    result.version = settings.value.zulip_version;
    result.featureLevel = settings.value.zulip_feature_level;
  }
  if (me.status === "fulfilled") {
    result.userId = me.value.user_id;
    result.isBot = me.value.is_bot;
  }
  if (me.status === "rejected") {
    const err = me.reason;
    if (isAuthError(err)) {
      result.authFailed = true;
      result.problem =
        `the server at ${client.origin} rejected the credentials of ${target.email} ` +
        `(${err.status} ${err.code}: ${err.msg}). Fix bots.${target.name}'s email or API key ` +
        `(or download a fresh zuliprc from Settings → Bots), and check that the bot is active.`;
    } else {
      result.problem = describe(err);
    }
  } else if (settings.status === "rejected") {
    result.problem = `could not read the server's version: ${describe(settings.reason)}`;
  }
  return result;
}

function describe(err: unknown): string {
  if (isBothostError(err)) return err.message;
  return err instanceof Error ? err.message : String(err);
}
