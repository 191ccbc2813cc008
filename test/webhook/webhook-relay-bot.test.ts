/**
 * The shipped webhook-relay bot (bots/webhook-relay.ts), configured in YAML with its secret from
 * the environment. It imports "bothost", which resolves to dist/: run `npm run build` first
 * (`npm test` does).
 */
import { createHmac } from "node:crypto";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import relay from "../../bots/webhook-relay.ts";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { type RunningDaemon, startDaemon } from "../support/http-daemon.ts";

const SECRET = "relay-secret-from-env";
const SLACK_SECRET = "slack-signing-secret-from-env";
let sandbox: Sandbox;
let running: RunningDaemon;

beforeAll(async () => {
  sandbox = await startSandbox({ heartbeatSeconds: 1 });
  sandbox.control.createUser({
    email: "relay-bot@sandbox.example",
    full_name: "Relay",
    bot: "generic",
    owner: "owner@sandbox.example",
    channels: ["general"],
  });
  sandbox.control.createUser({
    email: "slack-relay-bot@sandbox.example",
    full_name: "Slack relay",
    bot: "generic",
    owner: "owner@sandbox.example",
    channels: ["general"],
  });
  running = await startDaemon(
    sandbox,
    {
      "github-relay": {
        email: "relay-bot@sandbox.example",
        definition: relay as unknown as BotDefinition<never, never>,
        extra: [
          "settings:",
          "  webhook: github",
          '  verify: { type: github, secret: "${GH_SECRET}" }',
          "  idempotencyHeader: X-GitHub-Delivery",
          "  channel: general",
          '  topic: "{{body.repository.name}}"',
          '  content: "{{body.sender.login}} {{body.action | pushed}} #{{body.number}} ({{headers.x-github-event}})"',
        ].join("\n"),
      },
      "slack-relay": {
        email: "slack-relay-bot@sandbox.example",
        definition: relay as unknown as BotDefinition<never, never>,
        extra: [
          "settings:",
          "  webhook: deploy-command",
          '  verify: { type: slack, secret: "${SLACK_SECRET}" }',
          "  channel: general",
          "  topic: slack",
          '  content: "{{body.command}} {{body.text}}"',
        ].join("\n"),
      },
    },
    { env: { GH_SECRET: SECRET, SLACK_SECRET } },
  );
});

afterAll(async () => {
  await running.stop();
  await sandbox.stop();
});

async function deliver(payload: unknown, delivery: string, secret = SECRET) {
  const body = JSON.stringify(payload);
  const res = await request(`${running.url}/webhooks/github-relay/github`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": "pull_request",
      "x-github-delivery": delivery,
      "x-hub-signature-256": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
    },
    body,
  });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

const event = { action: "opened", number: 7, repository: { name: "bothost" }, sender: { login: "octocat" } };

describe("the webhook-relay bot", () => {
  it("posts the templated message for a signed delivery, once per delivery id", async () => {
    const res = await deliver(event, "gh-1");
    expect(res.status).toBe(200);
    const posted = sandbox.control.messages().find((m) => m.id === res.body.relayed);
    expect(posted).toMatchObject({ topic: "bothost", content: "octocat opened #7 (pull_request)" });
    expect(await deliver(event, "gh-1")).toEqual({ status: 200, body: { duplicate: true } });
    expect(
      sandbox.control.messages().filter((m) => String(m.content).startsWith("octocat opened #7")),
    ).toHaveLength(1);
  });

  it("refuses a delivery signed with another secret, and posts nothing", async () => {
    const before = sandbox.control.messages().length;
    expect(await deliver(event, "gh-2", "not-the-secret")).toEqual({
      status: 401,
      body: { error: "unauthorized: x-hub-signature-256 does not match the body" },
    });
    expect(sandbox.control.messages()).toHaveLength(before);
    expect(running.logText()).not.toContain(SECRET);
  });

  it("relays a slash command signed as Slack signs it (the guide's verifiers), its form's fields", async () => {
    const body = "command=%2Fdeploy&text=web+now";
    const t = Math.floor(Date.now() / 1000);
    const signed = (secret: string) =>
      `v0=${createHmac("sha256", secret).update(`v0:${t}:${body}`).digest("hex")}`;
    const send = async (signature: string) => {
      const res = await request(`${running.url}/webhooks/slack-relay/deploy-command`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          "x-slack-request-timestamp": String(t),
          "x-slack-signature": signature,
        },
        body,
      });
      return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
    };
    expect(await send(signed("not-the-signing-secret"))).toEqual({
      status: 401,
      body: { error: "unauthorized: x-slack-signature does not match the body" },
    });
    const res = await send(signed(SLACK_SECRET));
    expect(res.status).toBe(200);
    expect(sandbox.control.messages().find((m) => m.id === res.body.relayed)).toMatchObject({
      topic: "slack",
      content: "/deploy web now",
    });
    expect(running.logText()).not.toContain(SLACK_SECRET);
  });

  it("uses the fallbacks for missing values and an empty topic", async () => {
    const res = await deliver({ number: 8 }, "gh-3");
    expect(sandbox.control.messages().find((m) => m.id === res.body.relayed)).toMatchObject({
      topic: "webhook",
      content: "pushed #8 (pull_request)",
    });
  });

  it("refuses a JSON body that is no object (422, naming what it got), and posts nothing", async () => {
    const before = sandbox.control.messages().length;
    const bodies: [unknown, string][] = [
      [null, "null"],
      [[1, 2, 3], "an array"],
      ["text", "a string"],
      [42, "a number"],
    ];
    for (const [payload, what] of bodies) {
      expect(await deliver(payload, `gh-not-object-${what}`)).toEqual({
        status: 422,
        body: { error: `the body must be a JSON object, not ${what}` },
      });
    }
    expect(sandbox.control.messages()).toHaveLength(before);
    // Refused before its key was claimed: the same delivery as an object is relayed.
    const res = await deliver(event, "gh-not-object-null");
    expect(res.status).toBe(200);
    expect(running.logText()).toContain("webhook request refused: its JSON body is no object");
  });

  it("rejects settings without a verifier or with a short secret, naming the field", () => {
    const schema = (
      relay as unknown as {
        settings: {
          safeParse(v: unknown): {
            success: boolean;
            error?: { issues: { path: unknown[]; message: string }[] };
          };
        };
      }
    ).settings;
    const base = { channel: "general", topic: "t", content: "c" };
    const missing = schema.safeParse(base);
    expect(missing.success).toBe(false);
    expect(missing.error!.issues.map((i) => i.path.join("."))).toEqual(["verify"]);
    const short = schema.safeParse({ ...base, verify: { type: "bearer", token: "abc" } });
    expect(short.error!.issues.map((i) => [i.path.join("."), i.message])).toEqual([
      ["verify.token", "is too short: use a secret of at least 8 characters"],
    ]);
  });

  it("rejects a template whose placeholder would always render empty or be sent as it is", () => {
    const schema = (
      relay as unknown as {
        settings: { safeParse(v: unknown): { error?: { issues: { path: unknown[]; message: string }[] } } };
      }
    ).settings;
    const parsed = schema.safeParse({
      verify: { type: "none" },
      channel: "general",
      topic: "{{repository.name}} {{headers.x-github-event}}",
      content: "{{body.sender.login pushed {name} {{query.ref | main}}",
    });
    expect(parsed.error!.issues.map((i) => [i.path.join("."), i.message])).toEqual([
      [
        "topic",
        "uses {{repository.name}}: a path starts with body., headers. or query. (as {{body.repository.name}})",
      ],
      [
        "content",
        'has "{{body.sender.login pu", which is no placeholder: write {{name}} or {{name | fallback}}',
      ],
    ]);
  });
});
