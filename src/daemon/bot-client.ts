/**
 * A bot's client, as the daemon makes it: the server's URL (the embedded sandbox's for
 * `url: sandbox`, with the account's key from the sandbox when the config leaves it empty), the
 * daemon's clock and metrics, and under `dry_run` a capture that records each write instead of
 * making it.
 */
import type { Logger } from "pino";
import { type CapturedCall, CaptureLog } from "../api/capture.ts";
import { type Client, createClient } from "../api/create-client.ts";
import { type BudgetLimits, RateBudget } from "../api/rate-budget.ts";
import { SharedAccount } from "../bot/commands/shared-account.ts";
import type { BotConfig } from "../config/schema.ts";
import type { BothostMetrics } from "../http/bothost-metrics.ts";
import type { Sandbox } from "../sandbox/types.ts";
import type { Clock } from "../time/clock.ts";

export interface BotClient {
  client: Client;
  url: string;
  onSandbox: boolean;
  /** The writes a `dry_run` bot would have made. */
  captured: CaptureLog | undefined;
  /** The daemon's running bots on this bot's account, which answer commands as one (with `budgets`). */
  account: SharedAccount | undefined;
}

/**
 * The call budgets of each account the daemon's bots use, kept across reloads (a bot restarted by a
 * reload still counts the calls its account made this minute) and shared by the bots of one
 * account (the server counts per account). Planned with the lowest `rate_limit` of those bots.
 */
export class AccountBudgets {
  readonly #accounts = new Map<
    string,
    { budget: RateBudget; limits: Map<string, BudgetLimits>; commands?: SharedAccount }
  >();

  constructor(private readonly clock: Clock) {}

  /** The budget of account `email` on the server at `url`, for bot `name` with `limits`. */
  for(name: string, url: string, email: string, limits: BudgetLimits): RateBudget {
    const key = `${url} ${email.toLowerCase()}`;
    let account = this.#accounts.get(key);
    if (account === undefined) {
      account = { budget: new RateBudget(limits, this.clock, true), limits: new Map() };
      this.#accounts.set(key, account);
    }
    account.limits.set(name, limits);
    const all = [...account.limits.values()];
    account.budget.configure({
      perMinute: Math.min(...all.map((l) => l.perMinute)),
      perHour: Math.min(...all.map((l) => l.perHour)),
    });
    return account.budget;
  }

  /** The running bots on account `email` at `url` (made by `for`), which answer commands as one. */
  commandsOf(url: string, email: string): SharedAccount | undefined {
    const account = this.#accounts.get(`${url} ${email.toLowerCase()}`);
    if (account) account.commands ??= new SharedAccount();
    return account?.commands;
  }
}

export function botClient(
  name: string,
  c: BotConfig,
  deps: {
    log: Logger;
    clock: Clock;
    metrics?: BothostMetrics;
    sandbox?: Pick<Sandbox, "url" | "control">;
    budgets?: AccountBudgets;
  },
): BotClient {
  const { log, clock, sandbox } = deps;
  const onSandbox = c.server.url === "sandbox";
  const url = onSandbox ? sandbox?.url : c.server.url;
  if (!url) throw new Error(`bot ${name}: the config says "sandbox" but no sandbox is running`);
  const apiKey = onSandbox && c.api_key === "" ? sandbox!.control.apiKeyOf(c.email) : c.api_key;
  const captured = c.dry_run ? new CaptureLog(clock) : undefined;
  const capture = captured
    ? (call: CapturedCall) => {
        captured.add(call);
        log.info({ method: call.method, path: call.path }, `dry run: ${captured.recent.at(-1)!.does}`);
      }
    : undefined;
  const client = createClient({
    url,
    email: c.email,
    apiKey,
    logger: log,
    clock,
    rateLimit: { perMinute: c.rate_limit.per_minute, perHour: c.rate_limit.per_hour },
    ...(deps.budgets && {
      budget: deps.budgets.for(name, url, c.email, {
        perMinute: c.rate_limit.per_minute,
        perHour: c.rate_limit.per_hour,
      }),
    }),
    ...deps.metrics?.apiSink(name),
    ...(capture ? { capture } : {}),
  });
  return { client, url, onSandbox, captured, account: deps.budgets?.commandsOf(url, c.email) };
}
