/**
 * The shipped webhook-relay bot (bots/webhook-relay.ts) keyed by a path in the body
 * (`idempotencyKey: body.id`), configured in YAML, over real HTTP on the test clock: a Stripe-like
 * sender signs each attempt anew and carries its event id in the body only, so a retry hours later
 * is relayed once; a request without the id has no key, one whose id is no string or integer is
 * refused (400); a bad setting is reported at its config line. It imports "bothost", which
 * resolves to dist/: run `npm run build` first (`npm test` does).
 */
import { createHmac } from "node:crypto";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import relay from "../../bots/webhook-relay.ts";
import { validateBotSettings } from "../../src/bot/validate-settings.ts";
import { isConfigError } from "../../src/config/config-error.ts";
import { loadConfigWithSource } from "../../src/config/load-config.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const BOT = "relay-bot@sandbox.example";
const SECRET = "whsec-relay-secret-654";
const HOUR = 3_600_000;

const world = useSandbox({ bots: { [BOT]: "Relay" } });

async function started() {
  const clock = new ManualClock(Date.now());
  const logs: Record<string, unknown>[] = [];
  const settings = [
    "settings:",
    "  webhook: stripe",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's ${ENV} interpolation
    '  verify: { type: hmac, secret: "${STRIPE_SECRET}", header: Stripe-Signature }',
    "  idempotencyKey: body.id",
    "  channel: general",
    "  topic: billing",
    '  content: "{{body.type}} {{body.id | (no id)}}"',
  ].join("\n");
  const running = await world.daemon(
    { "stripe-relay": { email: BOT, definition: relay, extra: settings } },
    { clock, global: "http:\n  listen: 127.0.0.1:0", env: { STRIPE_SECRET: SECRET }, logs },
  );
  const url = running.daemon.http!.url!;
  /** A POST as Stripe makes each attempt: signed anew, at the clock's time. */
  const stripe = async (payload: unknown) => {
    const body = JSON.stringify(payload);
    const t = Math.floor(clock.now() / 1000);
    const v1 = createHmac("sha256", SECRET).update(`${t}.${body}`).digest("hex");
    const res = await request(`${url}/webhooks/stripe-relay/stripe`, {
      method: "POST",
      headers: { "content-type": "application/json", "stripe-signature": `t=${t},v1=${v1}` },
      body,
    });
    return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
  };
  const relayed = () => world.messagesFrom(BOT).map((m) => String(m.content));
  return { clock, stripe, relayed, logs };
}

const event = (id: unknown) => ({ id, object: "event", type: "invoice.paid" });

describe("the relay keyed by the event id in the body", () => {
  it("relays a Stripe retry 8 hours later, signed anew, once; another id again", async () => {
    const { clock, stripe, relayed, logs } = await started();
    const first = await stripe(event("evt_1"));
    expect(first.status).toBe(200);
    expect(first.body.relayed).toEqual(expect.any(Number));
    // Stripe did not get the answer (a timeout, a lost connection): it retries hours later.
    await clock.tick(8 * HOUR);
    expect(await stripe(event("evt_1"))).toEqual({ status: 200, body: { duplicate: true } });
    expect(relayed()).toEqual(["invoice.paid evt_1"]);
    const second = await stripe(event("evt_2"));
    expect(second.body.relayed).toEqual(expect.any(Number));
    expect(relayed()).toEqual(["invoice.paid evt_1", "invoice.paid evt_2"]);
    // The key is stored hashed and logged nowhere.
    expect(JSON.stringify(logs)).not.toContain("evt_1");
  });

  it("keys an integer id by its digits; a request without an id has no key, and is relayed each time", async () => {
    const { clock, stripe, relayed } = await started();
    expect((await stripe(event(42))).status).toBe(200);
    await clock.tick(HOUR);
    expect(await stripe(event(42))).toEqual({ status: 200, body: { duplicate: true } });
    // Missing, null or "": no key (each attempt's signature is its own, so each is relayed).
    const none = [{ type: "ping" }, event(null), event("")];
    for (const payload of none) expect((await stripe(payload)).status).toBe(200);
    await clock.tick(HOUR);
    expect((await stripe({ type: "ping" })).status).toBe(200);
    expect(relayed()).toEqual([
      "invoice.paid 42",
      "ping (no id)",
      "invoice.paid (no id)",
      "invoice.paid",
      "ping (no id)",
    ]);
  });

  it("refuses a request whose id is no string or integer (400), relaying nothing, and says why in the log", async () => {
    const { stripe, relayed, logs } = await started();
    const refused = {
      status: 400,
      body: { error: "the idempotency key could not be read: webhook stripe's idempotencyKey threw" },
    };
    for (const id of [{ nested: "evt_3" }, ["evt_3"], true, 2 ** 53, 1.5]) {
      expect(await stripe(event(id))).toEqual(refused);
    }
    expect(relayed()).toEqual([]);
    const warned = logs.filter(
      (l) => l.msg === "webhook request refused: its idempotency key could not be read",
    );
    // One line each, the operator's mistake: no stack trace.
    expect(warned.every((l) => l.err === undefined && l.code === "WEBHOOK_KEY_UNREADABLE")).toBe(true);
    expect(warned.map((l) => l.reason)).toEqual([
      "settings.idempotencyKey: body.id is an object, not a string or an integer",
      "settings.idempotencyKey: body.id is an array, not a string or an integer",
      "settings.idempotencyKey: body.id is a boolean, not a string or an integer",
      "settings.idempotencyKey: body.id is a number beyond 2^53 or not an integer, not a string or an integer",
      "settings.idempotencyKey: body.id is a number beyond 2^53 or not an integer, not a string or an integer",
    ]);
  });
});

describe("the idempotencyKey setting in a config file", () => {
  const file = "test/fixtures/bots/webhook-relay-key.yaml";

  it("takes a path into the body, beside a Stripe verifier", async () => {
    const { config, source } = await loadConfigWithSource(file);
    expect(await validateBotSettings("good", relay, config.bots.good?.settings, source)).toMatchObject({
      verify: { type: "hmac", header: "Stripe-Signature" },
      idempotencyKey: "body.data.object.id",
    });
  });

  it("is refused when the config is loaded, at its line, saying what is wrong", async () => {
    const { config, source } = await loadConfigWithSource(file);
    const problems: string[] = [];
    for (const [name, bot] of Object.entries(config.bots)) {
      if (name === "good") continue;
      const err = await validateBotSettings(name, relay, bot.settings, source).then(
        () => undefined,
        (e: unknown) => e,
      );
      if (!isConfigError(err)) throw new Error(`expected a ConfigError for ${name}, got ${String(err)}`);
      problems.push(err.format());
    }
    expect(problems.join("\n")).not.toContain("whsec-fixture-secret");
    expect(problems.join("\n")).toMatchInlineSnapshot(`
      "test/fixtures/bots/webhook-relay-key.yaml:10:23 bots.template.settings.idempotencyKey: is a path, not a template: write body.id without the braces
      test/fixtures/bots/webhook-relay-key.yaml:20:23 bots.header.settings.idempotencyKey: reads a header: set idempotencyHeader: x-delivery instead (its name, any case)
      test/fixtures/bots/webhook-relay-key.yaml:30:23 bots.root.settings.idempotencyKey: starts with id: a path starts with body. or query. (as body.id)
      test/fixtures/bots/webhook-relay-key.yaml:40:23 bots.whole.settings.idempotencyKey: names the whole body: name a field in it, as body.id
      test/fixtures/bots/webhook-relay-key.yaml:51:23 bots.both.settings.idempotencyKey: is set with idempotencyHeader: a request's key is read from one place, so set one of them"
    `);
  });
});
