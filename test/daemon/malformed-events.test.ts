/**
 * Events that fail their schema reach `on("unknown")` handlers as unknown events with `ctx.eventIssue`,
 * and never stop the rest of their batch. A message event without a message object used to throw
 * in the dispatch loop (the ledger and the conversation key read `message.id`): the poll was
 * counted as failed and every later event of the batch was lost. The server here is a plain
 * HTTP server on port 0, because the sandbox only ever sends well-formed events.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import type { BotApi } from "../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import { BotRuntime } from "../../src/daemon/bot-runtime.ts";
import { createLogger } from "../../src/log/create-logger.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";
import { botOptions } from "../support/pipeline.ts";

const message = (id: number, content: string) => ({
  id,
  sender_id: 8,
  sender_email: "member@example.com",
  sender_full_name: "Member",
  sender_realm_str: "x",
  avatar_url: null,
  client: "test",
  content,
  content_type: "text/x-markdown",
  recipient_id: 20,
  timestamp: 1_767_225_600,
  type: "stream",
  display_recipient: "general",
  stream_id: 1,
  subject: "t",
  topic_links: [],
  is_me_message: false,
  reactions: [],
  submessages: [],
});

/** One batch, then polls that wait until the test ends. */
const BATCH = [
  { id: 0, type: "message", message: message(100, "before"), flags: [] },
  { id: 1, type: "message", flags: [] }, // no message at all
  { id: 2, type: "message", message: { id: 101, content: 7 }, flags: [] }, // a message, malformed
  { id: 3, type: "typing", op: "start" }, // no sender, no recipients
  { id: 4, type: "message", message: message(102, "after"), flags: [] },
];

/** The log lines written so far, and the logger that writes them. */
const lines: string[] = [];
const log = createLogger({
  destination: new Writable({ write: (chunk, _e, done) => done(void lines.push(String(chunk))) }),
  pretty: false,
  level: "info",
});

let server: Server | undefined;
let runtime: BotRuntime | undefined;
afterEach(async () => {
  await runtime?.stop(1000);
  server?.closeAllConnections();
  server?.close();
  lines.length = 0;
});

function startServer(batch: unknown[] = BATCH): Promise<string> {
  let polls = 0;
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      const send = (body: unknown) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ result: "success", msg: "", ...(body as object) }));
      };
      if (path.endsWith("/register")) {
        send({
          queue_id: "q",
          last_event_id: -1,
          zulip_feature_level: 400,
          zulip_version: "10.0",
          event_queue_longpoll_timeout_seconds: 90,
          user_id: 1,
          email: "bot@example.com",
          realm_url: "http://example.com",
        });
      } else if (path.endsWith("/messages") && req.method === "GET") {
        send({ messages: [], anchor: 0, found_anchor: false, found_newest: true, found_oldest: true });
      } else if (path.endsWith("/events") && req.method === "GET") {
        if (++polls === 1) send({ events: batch });
        // later polls are left waiting
      } else send({});
    });
  });
  const listening = server;
  return new Promise((resolve) =>
    listening.listen(0, "127.0.0.1", () =>
      resolve(`http://127.0.0.1:${(listening.address() as AddressInfo).port}`),
    ),
  );
}

/** A bot runtime against the test server at `url`, logging into `lines`. */
function newRuntime(url: string, setup: (bot: BotApi) => void): BotRuntime {
  return new BotRuntime(
    botOptions({
      name: "b",
      definition: { setup } as unknown as BotDefinition<never, never>,
      client: createClient({ url, email: "bot@example.com", apiKey: "a".repeat(32), logger: log }),
      store: new MemoryStore(),
      log,
      concurrency: 4,
      handlerTimeoutMs: 5_000,
      replay: { maxMessages: 100, maxAgeMs: 86_400_000 },
    }),
  );
}

describe("events that fail their schema", () => {
  it("reach unknown-event handlers with the issue, and the rest of the batch is still handled", async () => {
    const url = await startServer();
    const seen: string[] = [];
    const everyEvent = new Promise<void>((resolve) => {
      const setup = (bot: BotApi) => {
        bot.on(["*", "unknown"], (ctx) => {
          const e = ctx.event as { id: number; message?: { content?: unknown } };
          seen.push(`${e.id}:${ctx.eventIssue === undefined ? String(e.message?.content) : "issue"}`);
          if (seen.length === BATCH.length) resolve();
        });
      };
      runtime = newRuntime(url, setup);
    });
    await runtime?.start();
    await everyEvent;
    expect([...seen].sort()).toEqual(["0:before", "1:issue", "2:issue", "3:issue", "4:after"]);
    expect(runtime?.status.failed).toBe(0);
    expect(lines.join("")).not.toMatch(/backing off/);
    // One warning per event type in the minute: the second malformed message is only counted.
    const kept = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === "event kept as unknown");
    expect(kept.map((l) => l.eventType).sort()).toEqual(["message", "typing"]);
    // The malformed message with an id was recorded like any other: the cursor passed all three.
    await runtime?.stop(1000);
    expect(runtime?.status.cursor).toBe(102);
  });

  it("keeps a restart event's log line in its place among the handlers of its batch", async () => {
    const batch = [
      { id: 0, type: "message", message: message(100, "first"), flags: [] },
      { id: 1, type: "restart", zulip_version: "11.0", zulip_feature_level: 401, server_generation: 2 },
      { id: 2, type: "message", message: message(101, "second"), flags: [] },
    ];
    const url = await startServer(batch);
    const both = new Promise<void>((resolve) => {
      let handled = 0;
      const setup = (bot: BotApi) => {
        bot.on("message", (ctx) => {
          ctx.log.info(`handled ${ctx.event.message.content}`);
          if (++handled === 2) resolve();
        });
      };
      runtime = newRuntime(url, setup);
    });
    await runtime?.start();
    await both;
    const order = lines
      .map((l) => JSON.parse(l).msg as string)
      .filter((m) => m.startsWith("handled") || m === "server restarted");
    expect(order).toEqual(["handled first", "server restarted", "handled second"]);
  });
});
