/**
 * A JSON body with a key named `__proto__` (or a `constructor` holding a `prototype`), over real HTTP: an outgoing-webhook delivery is taken
 * as any other (the key dropped, not refused as unreadable), an inbound webhook's handler gets the
 * body without the key, and no object's prototype is changed by it.
 */
import { request } from "undici";
import { describe, expect, it } from "vitest";
import type { WebhookContext } from "../../src/pipeline/context.ts";
import { webhookBot } from "../support/outgoing-delivery.ts";
import { HELPER, MEL, outgoingOrg, TOKEN } from "../support/outgoing-org.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

// The test POSTs to bothost itself: the server's own deliveries (to port 9) are never made.
const world = useSandbox({ org: outgoingOrg(9) });

/**
 * A JSON object's text with the keys that could reach a prototype first: `__proto__` (which
 * JSON.stringify never writes), and a `constructor` holding a `prototype`.
 */
const withProtoKey = (text: string) =>
  `{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},${text.slice(1)}`;

/** The helper bot on its listener: its message handler and its inbound webhook `echo` record what they got. */
async function helper() {
  const messages: { id: number; content: string; polluted: unknown }[] = [];
  const bodies: unknown[] = [];
  const d = await world.daemon(
    {
      helper: {
        email: HELPER,
        definition: webhookBot((b) => {
          b.on("message", (ctx) => {
            const m = ctx.event.message as unknown as Record<string, unknown>;
            messages.push({ id: ctx.event.message.id, content: String(m.content), polluted: m.polluted });
          });
          b.webhook("echo", { verify: { type: "none" } }, (ctx: WebhookContext) => {
            bodies.push(ctx.request.body);
            return { ok: true };
          });
        }),
        extra: `outgoing_webhook:\n  path: /hooks/helper\n  token: \${HELPER_TOKEN}`,
      },
    },
    { global: "http:\n  listen: 127.0.0.1:0", env: { HELPER_TOKEN: TOKEN } },
  );
  return { messages, bodies, d, url: d.daemon.http!.url! };
}

async function post(url: string, body: string) {
  const res = await request(url, { method: "POST", headers: { "content-type": "application/json" }, body });
  return { status: res.statusCode, body: (await res.body.json()) as unknown };
}

describe("a JSON body with a __proto__ key", () => {
  it("is a delivery as any other on an outgoing-webhook path, the key dropped", async () => {
    const { messages, d, url } = await helper();
    const content = '@**Helper** what is {"__proto__": 1}?';
    const id = world.sandbox.control.sendAs(MEL, { type: "stream", to: "general", topic: "t", content }).id;
    const key = world.sandbox.control.apiKeyOf(HELPER);
    const fetched = await request(`${world.sandbox.url}/api/v1/messages/${id}?apply_markdown=false`, {
      headers: { authorization: `Basic ${Buffer.from(`${HELPER}:${key}`).toString("base64")}` },
    });
    const { message } = (await fetched.body.json()) as { message: Record<string, unknown> };
    const payload = `{"data":${JSON.stringify(content)},"message":${withProtoKey(JSON.stringify(message))},"token":"${TOKEN}","trigger":"mention"}`;
    expect(await post(`${url}/hooks/helper`, withProtoKey(payload))).toEqual({
      status: 200,
      body: { response_not_required: true },
    });
    await d.stop();
    expect(messages).toEqual([{ id, content, polluted: undefined }]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("reaches an inbound webhook's handler without the key", async () => {
    const { bodies, url } = await helper();
    const body = withProtoKey(JSON.stringify({ a: 1, nested: JSON.parse(withProtoKey('{"b":2}')) }));
    expect(await post(`${url}/webhooks/helper/echo`, body)).toEqual({ status: 200, body: { ok: true } });
    expect(bodies).toHaveLength(1);
    const got = bodies[0] as Record<string, unknown>;
    expect(Object.keys(got)).toEqual(["a", "nested"]);
    expect(Object.hasOwn(got, "__proto__")).toBe(false);
    expect(got.constructor).toBe(Object);
    expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
    expect(Object.keys(got.nested as object)).toEqual(["b"]);
    expect(({ ...got, ...(got.nested as object) } as Record<string, unknown>).polluted).toBeUndefined();
  });
});
