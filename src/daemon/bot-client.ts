/**
 * A bot's client, as the daemon makes it: the server's URL (the embedded sandbox's for
 * `url: sandbox`, with the account's key from the sandbox when the config leaves it empty), the
 * daemon's clock and metrics, and under `dry_run` a capture that records each write instead of
 * making it.
 */
import type { Logger } from "pino";
import { type CapturedCall, CaptureLog } from "../api/capture.ts";
import { type Client, createClient } from "../api/create-client.ts";
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
}

export function botClient(
  name: string,
  c: BotConfig,
  deps: { log: Logger; clock: Clock; metrics?: BothostMetrics; sandbox?: Pick<Sandbox, "url" | "control"> },
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
    ...deps.metrics?.apiSink(name),
    ...(capture ? { capture } : {}),
  });
  return { client, url, onSandbox, captured };
}
