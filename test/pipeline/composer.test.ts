import { describe, expect, it } from "vitest";
import type { RoutableContext } from "../../src/pipeline/composer.ts";
import { Composer } from "../../src/pipeline/composer.ts";
import { parseEvent } from "../../src/wire/events.ts";
import {
  channelMessage,
  channelTyping,
  ctxFor,
  directMessage,
  dispatch,
  reaction,
} from "../support/pipeline.ts";

describe("Composer composition", () => {
  it("runs middleware in order, around next()", async () => {
    const log: string[] = [];
    const bot = new Composer();
    bot.use(async (_ctx, next) => {
      log.push("a in");
      await next();
      log.push("a out");
    });
    bot.use(async (_ctx, next) => {
      log.push("b in");
      await next();
      log.push("b out");
    });
    bot.on("message", () => {
      log.push("handler");
    });
    await dispatch(bot, ctxFor(channelMessage()));
    expect(log).toEqual(["a in", "b in", "handler", "b out", "a out"]);
  });

  it("stops at the first matching handler unless it calls next()", async () => {
    const log: string[] = [];
    const bot = new Composer();
    bot.on("message", { direct: true }, async (_ctx, next) => {
      log.push("dm, passes on");
      await next();
    });
    bot.on("message", () => {
      log.push("any message");
    });
    bot.on("message", () => {
      log.push("never");
    });
    await dispatch(bot, ctxFor(directMessage()));
    await dispatch(bot, ctxFor(channelMessage()));
    expect(log).toEqual(["dm, passes on", "any message", "any message"]);
  });

  it("routes by event type, several types, '*', and unknown type names", async () => {
    const seen: string[] = [];
    const bot = new Composer();
    const record = (label: string) => async (ctx: { event: { type: string } }, next: () => Promise<void>) => {
      seen.push(`${label}:${ctx.event.type}`);
      await next();
    };
    bot.on("message", record("message"));
    bot.on(["reaction", "typing"], record("pair"));
    bot.on("future_thing", record("future"));
    bot.on("*", record("all"));
    bot.on("unknown", record("unknown"));
    const future = parseEvent({ id: 99, type: "future_thing", payload: 1 }).event;
    for (const event of [channelMessage(), reaction(), channelTyping(), future])
      await dispatch(bot, ctxFor(event));
    expect(seen).toEqual([
      "message:message",
      "all:message",
      "pair:reaction",
      "all:reaction",
      "pair:typing",
      "all:typing",
      "future:future_thing",
      "unknown:future_thing",
    ]);
  });

  it('keeps a known-type event that failed its schema away from typed routes and from "*"', async () => {
    const parsed = parseEvent({ id: 5, type: "message", message: { id: 1 } });
    expect(parsed.known).toBe(false);
    const seen: string[] = [];
    const bot = new Composer();
    bot.on("message", async (_ctx, next) => {
      seen.push("typed");
      await next();
    });
    bot.on("*", async (_ctx, next) => {
      seen.push("star");
      await next();
    });
    bot.on("unknown", (ctx) => {
      seen.push(`unknown: ${ctx.eventIssue}`);
    });
    await dispatch(bot, ctxFor(parsed.event, { eventIssue: parsed.known ? undefined : parsed.issue }));
    expect(seen).toEqual([expect.stringMatching(/^unknown: message\.sender_id: /)]);
  });

  it("lets the first matching handler end the chain; the rest see what it filtered out", async () => {
    const log: string[] = [];
    const bot = new Composer()
      .on("message", { sender: 8 }, () => {
        log.push("admin");
      })
      .on("message", () => {
        log.push("fallback");
      });
    await dispatch(bot, ctxFor(channelMessage()));
    await dispatch(bot, ctxFor(directMessage({ id: 1 })));
    expect(log).toEqual(["admin", "admin"]);
    await dispatch(
      bot,
      ctxFor({ ...channelMessage(), message: { ...channelMessage().message, sender_id: 9 } }),
    );
    expect(log).toEqual(["admin", "admin", "fallback"]);
  });

  it("passes the runtime's richer context through untouched", async () => {
    interface RichContext extends RoutableContext {
      reply(text: string): string;
    }
    const bot = new Composer<RichContext>();
    let got = "";
    bot.on("message", (ctx) => {
      got = ctx.reply(ctx.event.message.content);
    });
    await dispatch(bot, { ...ctxFor(channelMessage()), reply: (text) => `re: ${text}` });
    expect(got).toBe("re: Can someone look at ticket 7?");
  });
});

describe("Composer errors", () => {
  it("rejects calling next() twice", async () => {
    const bot = new Composer()
      .use(async (_ctx, next) => next())
      .use(async (_ctx, next) => {
        await next();
        await next();
      });
    await expect(dispatch(bot, ctxFor(channelMessage()))).rejects.toMatchObject({
      name: "RouterError",
      code: "ROUTER_NEXT_CALLED_TWICE",
      message:
        "next() was called twice by middleware #2 of its composer. Call it at most once, and await it.",
    });
  });

  it("shows handler errors to catch(), with the context; they propagate either way", async () => {
    const boom = new Error("boom");
    const caught: Array<[unknown, number | undefined]> = [];
    const bot = new Composer();
    bot.on("message", () => {
      throw boom;
    });
    await expect(dispatch(bot, ctxFor(channelMessage()))).rejects.toBe(boom);
    bot.catch((err, ctx) => {
      caught.push([err, ctx.event.id]);
    });
    await expect(dispatch(bot, ctxFor(channelMessage()))).rejects.toBe(boom);
    expect(caught).toEqual([[boom, 3]]);
    expect(() => bot.catch(() => {})).toThrow(
      "catch(): this composer already has an error handler; handle every case in one function.",
    );
  });

  it("rejects bad arguments at setup", () => {
    const bot = new Composer();
    expect(() => bot.on("" as "message", () => {})).toThrow(
      'on(): the event type must be a non-empty string such as "message" or "*", or an array of them; got "".',
    );
    expect(() => bot.on([], () => {})).toThrow("got [].");
    // A misspelt typed name would only ever see unknown events of its own type: refused.
    expect(() => bot.on("mesage", () => {})).toThrow(
      'on(): "mesage" is not an event type: did you mean "message"? (To handle unknown events named so, use on("unknown") and read ctx.event.type.)',
    );
    expect(() => bot.on(["message", "reactions"], () => {})).toThrow(
      '"reactions" is not an event type: did you mean "reaction"?',
    );
    expect(() => bot.on("Message", () => {})).toThrow('did you mean "message"?');
    // The server's types this version has no schema for are taken, also when close to a known one.
    expect(() => bot.on(["submessage", "user_status"], () => {})).not.toThrow();
    expect(() => bot.on("message", { direct: true }, undefined as never)).toThrow(
      'on("message"): the handler must be a function (ctx, next), got undefined.',
    );
    expect(() => bot.on(["message", "reaction"], { op: "add" }, () => {})).toThrow(
      'on(["message", "reaction"]): filter "op" can never match "message" events',
    );
    expect(() => bot.use(42 as never)).toThrow(
      "use(): argument 1 must be a function (ctx, next), got number.",
    );
    expect(() => bot.catch("x" as never)).toThrow(
      "catch(): the handler must be a function (error, ctx), got string.",
    );
  });
});
