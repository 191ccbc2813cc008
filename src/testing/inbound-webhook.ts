/**
 * A test bot's inbound webhooks (`bot.webhook`), served by a listener of the bot's own when
 * `runBot({ webhooks: true })`: `bot.webhook(name, request)` sends a request to it as a sender
 * would, at `POST /webhooks/<bot>/<name>`.
 */
import type { InProcessDaemon } from "./in-process-daemon.ts";
import { kitError, shown } from "./kit-arguments.ts";

/**
 * What a test sends: a JSON body (a string is sent as it is, declared `application/json` when it
 * is JSON text), headers (a `content-type` among them is sent instead), the method (default POST).
 */
export interface WebhookRequest {
  body?: unknown;
  headers?: Record<string, string>;
  method?: string;
}

/** What the listener answered: the status, the body (parsed JSON, else its text), the headers. */
export interface WebhookResponse {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/** The listener's config for a bot that serves webhooks. */
export const LISTENER = "http:\n  listen: 127.0.0.1:0";

/** Sends `request` to inbound webhook `name` of bot `bot` on `running`'s listener. */
export async function sendWebhook(
  running: InProcessDaemon | undefined,
  bot: string,
  name: unknown,
  request: WebhookRequest = {},
): Promise<WebhookResponse> {
  if (typeof name !== "string" || name === "")
    throw kitError(`webhook: the name is the one given to bot.webhook(), got ${shown(name)}`);
  if (running === undefined) throw kitError(`webhook: ${bot} is stopped: start() it first`);
  const base = running.daemon.http?.url;
  if (base === undefined)
    throw kitError(`webhook: ${bot} serves no webhooks here: run it with runBot({ …, webhooks: true })`);
  const { body, method = "POST" } = request;
  const json = body !== undefined && typeof body !== "string";
  // A string is sent as it is (its bytes signed by the test, say): declared as JSON when it is
  // JSON text, as a sender declares it, unless the test gives the content type.
  const typed = Object.keys(request.headers ?? {}).some((h) => h.toLowerCase() === "content-type");
  const declareJson = !typed && (json || (typeof body === "string" && isJsonText(body)));
  const res = await fetch(`${base}/webhooks/${encodeURIComponent(bot)}/${encodeURIComponent(name)}`, {
    method,
    headers: { ...(declareJson && { "content-type": "application/json" }), ...request.headers },
    ...(body !== undefined && { body: json ? JSON.stringify(body) : (body as string) }),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: the text as it is.
  }
  return { status: res.status, body: parsed, headers: Object.fromEntries(res.headers) };
}

function isJsonText(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
