/**
 * What the outgoing-webhook tests share: a bot module made of a setup function, the server's POST
 * of a message to bothost's route, and the config of an outgoing-webhook bot under `bothost run`.
 */
import { type Agent, request } from "undici";
import type { BotApi } from "../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { HELPER, TOKEN } from "./outgoing-org.ts";

/** A bot module whose `setup` is `setup`. */
export function webhookBot(setup: (bot: BotApi) => void): BotDefinition<never, never> {
  return { setup } as unknown as BotDefinition<never, never>;
}

/**
 * POST message `id` to the helper bot's route under `url` as the server would (its payload built
 * from the message as the API gives it): the status and body, or the connection error's code.
 */
export async function postDelivery(sb: Sandbox, url: string, id: number, dispatcher?: Agent) {
  const key = sb.control.apiKeyOf(HELPER);
  const fetched = await request(`${sb.url}/api/v1/messages/${id}?apply_markdown=false`, {
    headers: { authorization: `Basic ${Buffer.from(`${HELPER}:${key}`).toString("base64")}` },
  });
  const { message } = (await fetched.body.json()) as { message: { content: string } };
  return request(`${url}/hooks/helper`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ data: message.content, message, token: TOKEN, trigger: "mention" }),
    ...(dispatcher ? { dispatcher } : {}),
  }).then(
    async (r) => ({ status: r.statusCode, body: await r.body.json() }),
    (err: { code?: string }) => ({ error: err.code ?? "connection error" }),
  );
}

/**
 * The config of `bothost run` for the helper bot of `module`, against the server at `serverUrl`,
 * its state under `dir` (or as the `state` lines give it: a crash backend's), listening on `port`;
 * its key in `${KEY}`, its token in `${HELPER_TOKEN}`.
 */
export function helperRunConfig(o: {
  serverUrl: string;
  dir: string;
  port: number;
  module: string;
  state?: string;
}): string {
  return (
    [
      `server:\n  url: ${o.serverUrl}`,
      o.state ?? `state:\n  path: ${o.dir}/state`,
      "log:\n  level: info\n  pretty: false",
      `http:\n  listen: 127.0.0.1:${o.port}`,
      "bots:",
      "  helper:",
      `    module: ${o.module}`,
      `    email: ${HELPER}`,
      `    api_key: \${KEY}`,
      "    outgoing_webhook:",
      "      path: /hooks/helper",
      `      token: \${HELPER_TOKEN}`,
      "      reply_deadline: 1s",
    ].join("\n") + "\n"
  );
}

/** What the helper bot said (in any conversation), oldest first. */
export function helperSaid(sb: Sandbox): string[] {
  const botId = sb.control.users().find((u) => u.email === HELPER)!.user_id;
  return sb.control
    .messages()
    .filter((m) => m.sender_id === botId)
    .map((m) => String(m.content));
}
