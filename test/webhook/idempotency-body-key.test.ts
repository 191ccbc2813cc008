/**
 * An inbound webhook's idempotency key read from the verified request (`idempotencyKey`), over
 * real HTTP on the test clock: a Stripe-like sender signs each attempt anew and carries its event
 * id in the body only, so its retries share that id's key for the webhook's window; a function
 * that throws or returns no string refuses the request (400); declared with `idempotencyHeader`,
 * or not a function, it stops the bot's setup.
 */
import { createHmac } from "node:crypto";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import type { WebhookOptions } from "../../src/bot/bot-api.ts";
import { defineBot } from "../../src/bot/define-bot.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const BOT = "stripe-bot@sandbox.example";
const SECRET = "whsec-test-secret-321";
const HOUR = 3_600_000;

const world = useSandbox({ bots: { [BOT]: "Stripe" } });

/**
 * "stripe": verified like Stripe's `Stripe-Signature`, keyed by the body's event id; it sends,
 * opens a ticket, and throws while `failing`. "strict": keyed by the body's `id` as it is.
 */
function stripeBot() {
  const seen = { runs: 0, tickets: 0, keyReads: 0, strictRuns: 0, failing: false };
  const definition = defineBot({
    setup(bot) {
      const stripe: WebhookOptions = {
        verify: { type: "hmac", secret: SECRET, header: "Stripe-Signature" },
        idempotencyKey: (request) => {
          seen.keyReads++;
          return (request.body as { id?: string }).id;
        },
      };
      bot.webhook("stripe", stripe, async (ctx) => {
        seen.runs++;
        const event = ctx.request.body as { id: string; type: string };
        await ctx.send({
          type: "channel",
          to: "general",
          topic: "billing",
          content: `${event.type} ${event.id}`,
        });
        const ticket = await ctx.external("open ticket", async () => ({ id: ++seen.tickets }));
        if (seen.failing) throw new Error("broke after the send and the ticket");
        return { ticket: ticket.id, key: ctx.request.idempotencyKey };
      });
      const strict: WebhookOptions = {
        verify: { type: "none" },
        idempotencyKey: (request) => (request.body as { id: string }).id,
      };
      bot.webhook("strict", strict, () => {
        seen.strictRuns++;
      });
      // An async key function (its promise rejects): refused, its rejection handled.
      const late = async (): Promise<string> => {
        throw new Error("no key yet");
      };
      bot.webhook("late", { verify: { type: "none" }, idempotencyKey: late as never }, () => {
        seen.strictRuns++;
      });
    },
  });
  return { seen, definition };
}

async function started() {
  const { seen, definition } = stripeBot();
  const clock = new ManualClock(Date.now());
  const logs: Record<string, unknown>[] = [];
  const running = await world.daemon(
    { billing: { email: BOT, definition } },
    { clock, global: "http:\n  listen: 127.0.0.1:0", logs },
  );
  const url = running.daemon.http!.url!;
  /** A POST as Stripe makes each attempt: signed anew, at the clock's time, with `secret`. */
  const stripe = async (body: string, secret = SECRET) => {
    const t = Math.floor(clock.now() / 1000);
    const v1 = createHmac("sha256", secret).update(`${t}.${body}`).digest("hex");
    const res = await request(`${url}/webhooks/billing/stripe`, {
      method: "POST",
      headers: { "content-type": "application/json", "stripe-signature": `t=${t},v1=${v1}` },
      body,
    });
    return { status: res.statusCode, body: await res.body.json() };
  };
  const strict = async (body: string, contentType = "application/json", name = "strict") => {
    const res = await request(`${url}/webhooks/billing/${name}`, {
      method: "POST",
      headers: { "content-type": contentType },
      body,
    });
    return { status: res.statusCode, body: await res.body.json() };
  };
  const sent = () => world.messagesFrom(BOT).map((m) => String(m.content));
  return { seen, clock, stripe, strict, sent, logs };
}

const event = (id: string) => JSON.stringify({ id, object: "event", type: "invoice.paid" });

describe("a Stripe-like sender: each attempt signed anew, the event id in the body", () => {
  it("a retry 8 hours later repeats no send and no external; once handled, it is a duplicate", async () => {
    const { seen, clock, stripe, sent, logs } = await started();
    // An unverified request never reaches the key function.
    expect((await stripe(event("evt_1"), "someone-elses-secret")).status).toBe(401);
    expect([seen.keyReads, seen.runs]).toEqual([0, 0]);
    seen.failing = true;
    expect((await stripe(event("evt_1"))).status).toBe(500);
    expect([sent(), seen.tickets]).toEqual([["invoice.paid evt_1"], 1]);
    await clock.tick(8 * HOUR);
    seen.failing = false;
    const retried = await stripe(event("evt_1"));
    expect([seen.runs, sent(), seen.tickets]).toEqual([2, ["invoice.paid evt_1"], 1]);
    expect(retried).toEqual({ status: 200, body: { ticket: 1, key: "evt_1" } });
    await clock.tick(24 * HOUR);
    expect(await stripe(event("evt_1"))).toEqual({ status: 200, body: { duplicate: true } });
    expect([seen.runs, sent(), seen.tickets]).toEqual([2, ["invoice.paid evt_1"], 1]);
    // The key is stored hashed and logged nowhere.
    expect(logs.length).toBeGreaterThan(0);
    expect(JSON.stringify(logs)).not.toContain("evt_1");
  });

  it("another event id is a new request", async () => {
    const { seen, stripe, sent } = await started();
    expect(await stripe(event("evt_1"))).toEqual({ status: 200, body: { ticket: 1, key: "evt_1" } });
    expect(await stripe(event("evt_2"))).toEqual({ status: 200, body: { ticket: 2, key: "evt_2" } });
    expect([seen.runs, sent()]).toEqual([2, ["invoice.paid evt_1", "invoice.paid evt_2"]]);
  });
});

describe("a key function that reads no key", () => {
  const refused = (reason: string) => ({
    status: 400,
    body: { error: `the idempotency key could not be read: webhook strict's idempotencyKey ${reason}` },
  });

  it("throws, or returns an empty string or another type: 400 naming the webhook, the handler does not run; undefined is no key", async () => {
    const { seen, strict, logs } = await started();
    expect(await strict("not json", "text/plain")).toEqual(refused("threw"));
    expect(await strict(JSON.stringify({ id: "" }))).toEqual(
      refused('returned "", not a non-empty string or undefined'),
    );
    expect(await strict(JSON.stringify({ id: 42 }))).toEqual(
      refused("returned a number, not a non-empty string or undefined"),
    );
    expect(await strict(JSON.stringify({ id: null }))).toEqual(
      refused("returned null, not a non-empty string or undefined"),
    );
    expect(await strict("{}", "application/json", "late")).toEqual({
      status: 400,
      body: {
        error:
          "the idempotency key could not be read: webhook late's idempotencyKey returned a Promise, not a non-empty string or undefined",
      },
    });
    expect(seen.strictRuns).toBe(0);
    const warned = logs.filter(
      (l) => l.msg === "webhook request refused: its idempotency key could not be read",
    );
    expect(warned.map((l) => [l.webhook, l.reason])).toEqual([
      ["strict", "threw"],
      ["strict", 'returned "", not a non-empty string or undefined'],
      ["strict", "returned a number, not a non-empty string or undefined"],
      ["strict", "returned null, not a non-empty string or undefined"],
      ["late", "returned a Promise, not a non-empty string or undefined"],
    ]);
    // undefined: the request has no key, and is handled as a new one each time.
    expect(await strict("{}")).toEqual({ status: 200, body: { ok: true } });
    expect(await strict("{}")).toEqual({ status: 200, body: { ok: true } });
    expect(seen.strictRuns).toBe(2);
  });
});

describe("declaring idempotencyKey", () => {
  const setupError = async (options: WebhookOptions) => {
    const logs: Record<string, unknown>[] = [];
    const definition = defineBot({
      setup(bot) {
        bot.webhook("stripe", options, () => {});
      },
    });
    await world.daemon({ billing: { email: BOT, definition } }, { logs });
    return (logs.find((l) => l.msg === "bot failed to start") as { error: string }).error;
  };

  it("with idempotencyHeader too stops the bot's setup, naming the webhook", async () => {
    const both = { verify: { type: "none" }, idempotencyHeader: "X-Id", idempotencyKey: () => "k" } as const;
    expect(await setupError(both)).toBe(
      'bot.webhook("stripe"): declare idempotencyHeader or idempotencyKey, not both (idempotencyKey gets the request\'s headers too, to read a header first). [BOT_SETUP_INVALID]',
    );
  });

  it("as no function stops the bot's setup, naming the webhook", async () => {
    const notFunction = { verify: { type: "none" }, idempotencyKey: "id" } as unknown as WebhookOptions;
    expect(await setupError(notFunction)).toBe(
      'bot.webhook("stripe"): idempotencyKey must be a function (request) => string | undefined that reads the key from the request. [BOT_SETUP_INVALID]',
    );
  });
});
