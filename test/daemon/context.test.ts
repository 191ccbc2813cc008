/** The lazy context: members made on first use, replaceable by middleware, usable destructured. */
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/log/create-logger.ts";
import { type ContextDeps, createContext, LazyBaseContext } from "../../src/pipeline/context.ts";
import type { ServerEvent } from "../../src/wire/events.ts";

const lines: string[] = [];
const log = createLogger({
  level: "info",
  pretty: false,
  destination: new Writable({
    write(chunk, _e, done) {
      lines.push(String(chunk));
      done();
    },
  }),
});
const sent: unknown[] = [];
const deps = {
  bot: { name: "ctx", userId: 9, email: "ctx-bot@example.org" },
  api: {
    messages: {
      send: async (params: unknown) => {
        sent.push(params);
        return { id: 77 };
      },
    },
  },
  state: { kind: "kv" },
  log,
  settings: { greeting: "hi" },
  server: { maxMessageLength: 10_000, maxTopicLength: 60 },
  channelName: (id: number) => (id === 5 ? "general" : undefined),
} as unknown as ContextDeps<{ greeting: string }>;
const event = {
  id: 3,
  type: "message",
  flags: [],
  message: { id: 41, type: "stream", stream_id: 5, subject: "t", display_recipient: "general", sender_id: 2 },
} as unknown as ServerEvent;

describe("context", () => {
  it("reads through to the bot's parts and lets middleware replace any member", () => {
    const ctx = createContext(deps, event, new AbortController().signal, {
      replayed: true,
      source: "catch-up",
    });
    expect([ctx.bot, ctx.api, ctx.state, ctx.settings, ctx.server]).toEqual([
      deps.bot,
      deps.api,
      deps.state,
      deps.settings,
      deps.server,
    ]);
    expect([ctx.event, ctx.replayed, ctx.eventIssue, ctx.channelName?.(5)]).toEqual([
      event,
      true,
      undefined,
      "general",
    ]);
    const other = { greeting: "ho" };
    ctx.settings = other;
    ctx.bot = { ...deps.bot, name: "renamed" };
    expect(ctx.settings).toBe(other);
    expect(ctx.bot.name).toBe("renamed");
    const reply = async () => ({ id: 1 });
    ctx.reply = reply;
    expect(ctx.reply).toBe(reply);
  });

  it("answers in the event's conversation even when destructured, and binds its log to the event", async () => {
    const ctx = createContext(deps, event, new AbortController().signal, {
      replayed: false,
      source: "queue",
    });
    const { reply } = ctx;
    expect(await reply("pong")).toEqual({ id: 77 });
    expect(sent.at(-1)).toMatchObject({
      type: "channel",
      to: 5,
      topic: "t",
      content: "pong",
      read_by_sender: true,
    });
    ctx.log.info("seen");
    expect(JSON.parse(lines.at(-1) as string)).toMatchObject({ msg: "seen", eventId: 3, messageId: 41 });
  });

  it("makes the signal only when read, from the queue task's control", () => {
    let reads = 0;
    const controller = new AbortController();
    const control = {
      get signal() {
        reads++;
        return controller.signal;
      },
    };
    const ctx = createContext(deps, event, control, { replayed: false, source: "queue" });
    expect(reads).toBe(0);
    expect(ctx.signal).toBe(controller.signal);
    expect(ctx.signal).toBe(controller.signal);
    expect(reads).toBe(1);
  });

  it("keeps a cron or webhook context's own log bindings, and its own fields when assigned", () => {
    const base = new LazyBaseContext(deps, new AbortController().signal, "job", { job: "nightly" });
    const job = Object.assign(base, { job: { id: "nightly" } });
    job.log.info("ran");
    expect(JSON.parse(lines.at(-1) as string)).toMatchObject({ msg: "ran", job: "nightly" });
    expect(job.job.id).toBe("nightly");
    expect(job.settings).toBe(deps.settings);
  });
});
