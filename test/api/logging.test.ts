import { Writable } from "node:stream";
import { inspect } from "node:util";
import pino from "pino";
import { describe, expect } from "vitest";
import type { Logger } from "../../src/api/logger.ts";
import { API_KEY, EMAIL, test } from "../support/api/client-fixture.ts";
import * as rec from "../support/api/records.ts";
import { failure, success } from "../support/api/test-server.ts";

/** A pino logger writing JSON lines into memory. */
function capture(level = "debug"): {
  logger: Logger;
  lines: () => Array<Record<string, unknown>>;
  text: () => string;
} {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString("utf8"));
      done();
    },
  });
  // pino's Logger must satisfy our Logger interface as is (checked by tsc here).
  const logger: Logger = pino({ level }, stream);
  return {
    logger,
    text: () => chunks.join(""),
    lines: () =>
      chunks
        .join("")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

const credentials = Buffer.from(`${EMAIL}:${API_KEY}`).toString("base64");

describe("logging", () => {
  test("ignored_parameters_unsupported is logged as a warning naming the endpoint and parameters", async ({
    server,
    makeClient,
  }) => {
    const log = capture();
    server.reply(success({ id: 9, ignored_parameters_unsupported: ["read_by_sender", "widget_content"] }));
    const result = await makeClient({ logger: log.logger }).messages.send({
      type: "direct",
      to: [1],
      content: "x",
      read_by_sender: true,
    });
    expect(result.id).toBe(9);
    const warnings = log.lines().filter((l) => l.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      component: "api",
      email: EMAIL,
      endpoint: "POST /messages",
      ignoredParameters: ["read_by_sender", "widget_content"],
      msg: "POST /messages: the server ignored parameters it does not support: read_by_sender, widget_content. They may need a newer server.",
    });
  });

  test("at level info a call that succeeds logs nothing; a warning still names the client", async ({
    server,
    makeClient,
  }) => {
    const log = capture("info");
    const client = makeClient({ logger: log.logger });
    server.reply(success({ id: 1 }), success({ id: 2, ignored_parameters_unsupported: ["widget_content"] }));
    await client.messages.send({ type: "direct", to: [1], content: "x" });
    expect(log.lines()).toEqual([]);
    await client.messages.send({ type: "direct", to: [1], content: "y" });
    expect(log.lines()).toEqual([
      expect.objectContaining({ level: 40, component: "api", email: EMAIL, endpoint: "POST /messages" }),
    ]);
  });

  test("a malformed known event is kept as unknown and logged", async ({ server, makeClient }) => {
    const log = capture();
    server.reply(
      success({
        events: [
          { id: 1, type: "reaction", op: "add" },
          { id: 2, type: "brand_new_type", payload: 1 },
          { id: 3, type: "heartbeat" },
        ],
      }),
    );
    const { events } = await makeClient({ logger: log.logger }).events.get({
      queue_id: "q",
      last_event_id: 0,
    });
    expect(events).toEqual([
      { id: 1, type: "reaction", op: "add" },
      { id: 2, type: "brand_new_type", payload: 1 },
      { id: 3, type: "heartbeat" },
    ]);
    const warnings = log.lines().filter((l) => l.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ eventId: 1, eventType: "reaction" });
    expect(String(warnings[0]?.issue)).toContain("message_id");
  });

  test("the API key appears in no log line and no error, even when the server echoes it", async ({
    server,
    makeClient,
  }) => {
    const log = capture();
    const client = makeClient({ logger: log.logger, retry: { maxAttempts: 2 } });
    const errors: unknown[] = [];
    const attempt = async (fn: () => Promise<unknown>) => {
      try {
        await fn();
      } catch (err) {
        errors.push(err);
      }
    };
    server.reply(failure(401, { msg: `Invalid API key ${API_KEY}`, code: "UNAUTHORIZED" }));
    await attempt(() => client.users.me());
    server.reply({ status: 502, raw: `<pre>Authorization: Basic ${credentials} key=${API_KEY}</pre>` });
    server.reply({ status: 502, raw: `<pre>Authorization: Basic ${credentials} key=${API_KEY}</pre>` });
    await attempt(() => client.users.me());
    server.reply(failure(400, { msg: `bad key ${API_KEY}`, code: "BAD_REQUEST", api_key_echo: "x" }));
    await attempt(() => client.messages.send({ type: "direct", to: [1], content: "x" }));
    server.reply(
      failure(429, { msg: "slow down", code: "RATE_LIMIT_HIT", "retry-after": 0.01 }),
      success(rec.ownUser),
    );
    await attempt(() => client.users.me());
    server.reply({ status: 500, raw: "oops" });
    await attempt(() => client.messages.send({ type: "direct", to: [1], content: "x" }));

    expect(errors).toHaveLength(4);
    expect(log.lines().length).toBeGreaterThan(8);
    const everything = [
      log.text(),
      ...errors.map(
        (e) =>
          `${(e as Error).message} ${(e as Error).stack} ${inspect(e, { depth: 5 })} ${JSON.stringify(e)}`,
      ),
      inspect(client, { depth: 5 }),
      JSON.stringify(client),
    ].join("\n");
    expect(everything).not.toContain(API_KEY);
    expect(everything).not.toContain(credentials);
    expect(everything).toContain("[redacted]");
    // …while the key did reach the server, in the Authorization header.
    expect(server.requests[0]?.headers.authorization).toBe(`Basic ${credentials}`);
  });

  test("the default logger is silent", async ({ server, makeClient }) => {
    server.reply(success({ id: 1, ignored_parameters_unsupported: ["x"] }));
    await expect(
      makeClient().messages.send({ type: "direct", to: [1], content: "x" }),
    ).resolves.toMatchObject({
      id: 1,
    });
  });
});
