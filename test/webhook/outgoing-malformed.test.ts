/**
 * What an outgoing-webhook path answers a request that is no delivery the server would make, over
 * real HTTP: a Slack-format body missing its fields, or with ids that are no positive integers,
 * gets 400 naming the field once its token is right (no lookup made, nothing left pending). A body
 * that cannot be read (not valid JSON, too large, of another content type) has no token to check:
 * it is answered first, in the path's own shape (`{"result":"error","msg":…}`) as every answer of
 * the path, in the inbound webhooks' words.
 */
import { connect } from "node:net";
import { Readable } from "node:stream";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { webhookBot } from "../support/outgoing-delivery.ts";
import { HELPER, outgoingOrg, TOKEN } from "../support/outgoing-org.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

// The tests POST to bothost themselves: the server's own deliveries (to port 9) are never made.
const world = useSandbox({ org: outgoingOrg(9, "slack") });

/** `http.body_limit`: the smallest one the config takes. */
const LIMIT = 1024;

/** The helper bot, its handler counting the messages it got, under a daemon on its listener. */
async function helper() {
  const seen: number[] = [];
  const d = await world.daemon(
    {
      helper: {
        email: HELPER,
        definition: webhookBot((b) => b.on("message", (ctx) => void seen.push(ctx.event.message.id))),
        extra: `outgoing_webhook:\n  path: /hooks/helper\n  token: \${HELPER_TOKEN}`,
      },
    },
    { global: `http:\n  listen: 127.0.0.1:0\n  body_limit: ${LIMIT}`, env: { HELPER_TOKEN: TOKEN } },
  );
  return { seen, d, url: d.daemon.http!.url! };
}

/** POST `body` to the helper's path with `contentType`: the status and the parsed answer. */
async function post(url: string, contentType: string, body: string) {
  const res = await request(`${url}/hooks/helper`, {
    method: "POST",
    headers: { "content-type": contentType },
    body,
  });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

/** A Slack-compatible form as the server sends it, with `fields` changed (`undefined`: left out). */
function slackForm(fields: Record<string, string | string[] | undefined>): string {
  const all: Record<string, string | string[] | undefined> = {
    token: TOKEN,
    channel_id: "C1",
    user_id: "U2",
    timestamp: "1700000000",
    text: "@**Helper** hi",
    ...fields,
  };
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(all))
    for (const value of v === undefined ? [] : [v].flat()) form.append(k, value);
  return form.toString();
}

const FORM = "application/x-www-form-urlencoded";
const malformed = (msg: string) => ({
  status: 400,
  body: { result: "error", msg: `the Slack-format payload is malformed: ${msg}` },
});

describe("a Slack-format body", () => {
  it("missing a field, or with an id that is no positive integer, gets 400 naming the field; no lookup is made", async () => {
    const { seen, d, url } = await helper();
    const CASES: [Record<string, string | string[] | undefined>, string][] = [
      // What `curl --data-urlencode token=… --data-urlencode text=hi` sends.
      [
        { channel_id: undefined, user_id: undefined, timestamp: undefined, text: "hi" },
        "channel_id: expected C<the channel's id>, a positive integer; it is missing",
      ],
      [{ channel_id: "C0" }, `channel_id: expected C<the channel's id>, a positive integer; got "C0"`],
      [
        { channel_id: "Cgeneral" },
        `channel_id: expected C<the channel's id>, a positive integer; got "Cgeneral"`,
      ],
      [{ user_id: "U-2" }, `user_id: expected U<the sender's id>, a positive integer; got "U-2"`],
      [
        { user_id: ["U2", "U3"] },
        "user_id: expected U<the sender's id>, a positive integer; it is given more than once",
      ],
      [
        { timestamp: "" },
        `timestamp: expected <the time it was sent, in whole seconds>, a positive integer; got ""`,
      ],
      [
        { timestamp: "1700000000.5" },
        `timestamp: expected <the time it was sent, in whole seconds>, a positive integer; got "1700000000.5"`,
      ],
      [{ text: undefined }, "text: expected the message's text; it is missing"],
      [{ text: "" }, `text: expected the message's text; got ""`],
    ];
    for (const [fields, msg] of CASES)
      expect(await post(url, FORM, slackForm(fields)), msg).toEqual(malformed(msg));
    // The token first: without it, nothing is said of the body.
    expect(await post(url, FORM, slackForm({ token: "nope", channel_id: undefined }))).toEqual({
      status: 401,
      body: {
        result: "error",
        msg: "Unauthorized: the token does not match this bot's outgoing_webhook token",
      },
    });
    // A JSON body of the Slack shape is read the same way.
    expect(await post(url, "application/json", JSON.stringify({ token: TOKEN, text: "hi" }))).toEqual(
      malformed("channel_id: expected C<the channel's id>, a positive integer; it is missing"),
    );
    await d.stop();
    expect(seen).toEqual([]);
    // No lookup failed, none was left pending at the stop.
    expect(d.logs.filter((l) => String(l.msg).includes("Slack-format"))).toEqual([]);
  });
});

describe("a body that cannot be read", () => {
  const unreadable = (status: number, msg: string) => ({ status, body: { result: "error", msg } });

  it("is answered before the token can be checked, in the path's own shape", async () => {
    const { seen, d, url } = await helper();
    const NOT_JSON = unreadable(400, "the body is not valid JSON");
    expect(await post(url, "application/json", `{"token":"${TOKEN}",`)).toEqual(NOT_JSON);
    expect(await post(url, "application/json", "{nope")).toEqual(NOT_JSON);
    expect(await post(url, "application/json", "")).toEqual(NOT_JSON);
    const NEITHER = unreadable(
      415,
      "the body is neither JSON nor a form: expected the Zulip JSON or Slack form format",
    );
    expect(await post(url, "application/xml", `<token>${TOKEN}</token>`)).toEqual(NEITHER);
    // Plain text too, which the listener could read as text: the path takes JSON or a form.
    expect(await post(url, "text/plain", `token=${TOKEN}`)).toEqual(NEITHER);
    expect(await post(url, "text/plain; charset=utf-8", JSON.stringify({ token: TOKEN }))).toEqual(NEITHER);
    const TOO_LARGE = unreadable(413, `request body is larger than ${LIMIT} bytes`);
    const big = JSON.stringify({ token: TOKEN, data: "x".repeat(2 * LIMIT) });
    expect(await post(url, "application/json", big)).toEqual(TOO_LARGE);
    // Streamed, its length not declared: refused once it passes the limit.
    const streamed = await request(`${url}/hooks/helper`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: Readable.from(
        Array.from({ length: 4 }, (_, i) => Buffer.from(big.slice(i * LIMIT, (i + 1) * LIMIT))),
      ),
    });
    expect({ status: streamed.statusCode, body: await streamed.body.json() }).toEqual(TOO_LARGE);
    expect(seen).toEqual([]);
    expect(d.logText()).not.toContain(TOKEN);
  });

  it("a sender that hangs up mid-body is logged as such, with its address", async () => {
    const { seen, d, url } = await helper();
    const socket = connect(Number(new URL(url).port), "127.0.0.1");
    // Its body is sent once the listener asked for it (100 Continue), then the connection closed.
    socket.write(
      "POST /hooks/helper HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n",
    );
    await new Promise((resolve) => socket.once("data", resolve));
    await new Promise((resolve) => socket.write(`{"token":"${TOKEN}"`, resolve));
    socket.destroy();
    await expect
      .poll(() => d.logs.find((l) => String(l.msg).startsWith("http request: the client closed")))
      .toMatchObject({ level: 30, method: "POST", path: "/hooks/helper", remoteAddress: "127.0.0.1" });
    expect(d.logs.filter((l) => (l.level as number) >= 50)).toEqual([]);
    expect(seen).toEqual([]);
  });
});
