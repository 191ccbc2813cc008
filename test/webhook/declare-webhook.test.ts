/**
 * `bot.webhook()` checks its options when setup calls it: a `verify` without its secret (a
 * setting not set), of a mistyped type, with a field of the wrong kind, or an option misspelled
 * stops the bot's start with `BOT_SETUP_INVALID`, naming the call and the field and never the
 * secret, instead of a bot that answers every request 500 (its sender retrying it for days).
 */
import { request } from "undici";
import { describe, expect, it } from "vitest";
import type { WebhookOptions } from "../../src/bot/bot-api.ts";
import { defineBot } from "../../src/bot/define-bot.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const BOT = "deploy-bot@sandbox.example";
const SECRET = "s3cr3t-never-shown-42";

const world = useSandbox({ bots: { [BOT]: "Deploys" } });

/** The daemon's log of a start whose bot declares `options`: its `bot failed to start` error, and the whole text. */
async function declared(options: unknown) {
  const definition = defineBot({
    setup(bot) {
      bot.webhook("deploys", options as WebhookOptions, () => ({ deployed: true }));
    },
  });
  const running = await world.daemon(
    { ops: { email: BOT, definition } },
    { global: "http:\n  listen: 127.0.0.1:0" },
  );
  const failed = running.logs.find((l) => l.msg === "bot failed to start") as { error?: string } | undefined;
  return { error: failed?.error, text: running.logText(), url: running.daemon.http!.url! };
}

const at = 'bot.webhook("deploys")';
const TYPES = 'one of "github", "hmac", "slack", "bearer", "secret", "none"';

const WRONG: [string, unknown, string][] = [
  [
    "a bearer verifier without its token (a setting not set)",
    { verify: { type: "bearer", token: undefined } },
    `${at}.verify.token is required for type "bearer": a non-empty string; got nothing (undefined: a setting not set?).`,
  ],
  [
    "a mistyped verify type, its secret not shown",
    { verify: { type: "hmc", secret: SECRET } },
    `${at}.verify.type "hmc" is not a verifier. Did you mean "hmac"? Use ${TYPES}.`,
  ],
  [
    "a slack verifier without its signing secret",
    { verify: { type: "slack", secret: "" } },
    `${at}.verify.secret is required for type "slack": a non-empty string; got an empty string.`,
  ],
  [
    "a misspelt slack type",
    { verify: { type: "slakc", secret: SECRET } },
    `${at}.verify.type "slakc" is not a verifier. Did you mean "slack"? Use ${TYPES}.`,
  ],
  [
    "a slack tolerance past a day",
    { verify: { type: "slack", secret: SECRET, toleranceSeconds: 86_401 } },
    `${at}.verify.toleranceSeconds must be a whole number of seconds from 1 to 86400; got 86401.`,
  ],
  [
    "no verify",
    { idempotencyHeader: "X-Request-Id" },
    `${at}.verify is required: how requests are authenticated, e.g. { type: "bearer", token } ({ type: "none" } to accept any request).`,
  ],
  [
    "no type",
    { verify: { secret: SECRET } },
    `${at}.verify.type must be ${TYPES}; got nothing (undefined: a setting not set?).`,
  ],
  [
    "a secret given as the type",
    { verify: { type: `${SECRET}/x` } },
    `${at}.verify.type must be ${TYPES}; got a string that is no verifier.`,
  ],
  [
    "an empty secret",
    { verify: { type: "github", secret: "" } },
    `${at}.verify.secret is required for type "github": a non-empty string; got an empty string.`,
  ],
  [
    "a secret that is a number",
    { verify: { type: "secret", secret: 1234 } },
    `${at}.verify.secret is required for type "secret": a non-empty string; got a number.`,
  ],
  [
    "a misspelled field of the verifier",
    { verify: { type: "bearer", tokn: SECRET } },
    `${at}.verify (type "bearer"): unknown field "tokn". Did you mean "token"? Valid: type, token.`,
  ],
  [
    "a field of another verifier",
    { verify: { type: "github", secret: SECRET, header: "X-Gitea-Signature" } },
    `${at}.verify (type "github"): unknown field "header". Valid: type, secret.`,
  ],
  [
    "a bearer token with a space (never matches a header)",
    { verify: { type: "bearer", token: `${SECRET} ` } },
    `${at}.verify.token holds whitespace, which an "Authorization: Bearer" header cannot carry: every request would be refused.`,
  ],
  [
    "a header that is no header name",
    { verify: { type: "hmac", secret: SECRET, header: "X Signature" } },
    `${at}.verify.header must be a header name such as "X-Signature" (letters, digits, "-"); got a string that is no header name.`,
  ],
  [
    "a tolerance that is no whole number of seconds",
    { verify: { type: "hmac", secret: SECRET, toleranceSeconds: "300" } },
    `${at}.verify.toleranceSeconds must be a whole number of seconds from 1 to 86400; got a string.`,
  ],
  [
    "a misspelled option",
    { verify: { type: "none" }, idempotencyHeadr: "X-Request-Id" },
    `${at}: unknown option "idempotencyHeadr". Did you mean "idempotencyHeader"? Valid: verify, idempotencyHeader, idempotencyKey, maxBodyBytes, objectBody.`,
  ],
  [
    "an empty idempotency header",
    { verify: { type: "none" }, idempotencyHeader: "" },
    `${at}.idempotencyHeader must be a header name such as "X-Signature" (letters, digits, "-"); got an empty string.`,
  ],
  [
    "a body limit that is no number of bytes",
    { verify: { type: "none" }, maxBodyBytes: 0.5 },
    `${at}.maxBodyBytes must be a whole number of bytes, at least 1; got 0.5.`,
  ],
  ["no options", null, `${at}: the options must be an object { verify: … }; got null.`],
];

describe("bot.webhook() declared wrongly", () => {
  it.each(WRONG)(
    "%s: the bot does not start, BOT_SETUP_INVALID names the field",
    async (_what, options, message) => {
      const { error, text, url } = await declared(options);
      expect(error).toBe(`${message} [BOT_SETUP_INVALID]`);
      expect(text).not.toContain(SECRET);
      // Nothing answers 500 to a sender that would retry it.
      const res = await request(`${url}/webhooks/ops/deploys`, { method: "POST", body: "{}" });
      await res.body.dump();
      expect(res.statusCode).not.toBe(500);
    },
  );

  it("declared rightly, with every option, it starts and serves", async () => {
    const { error, url } = await declared({
      verify: { type: "secret", secret: SECRET, header: "X-Gitlab-Token" },
      idempotencyHeader: "X-Request-Id",
      maxBodyBytes: 1024,
    });
    expect(error).toBeUndefined();
    const res = await request(`${url}/webhooks/ops/deploys`, {
      method: "POST",
      headers: { "x-gitlab-token": SECRET, "content-type": "application/json" },
      body: "{}",
    });
    expect([res.statusCode, await res.body.json()]).toEqual([200, { deployed: true }]);
  });
});
