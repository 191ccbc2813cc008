/**
 * The synchronous path of Composer.run(): no promise while every middleware returns a
 * non-thenable, and the same effects, order and errors once one is async.
 */
import { describe, expect, it } from "vitest";
import { Composer } from "../../src/pipeline/composer.ts";
import { channelMessage, ctxFor, directMessage, reaction } from "../support/pipeline.ts";

/** A bot whose every middleware is synchronous: use, on (typed, filtered, with `when`), catch. */
function syncBot(log: string[]) {
  return new Composer()
    .use((_ctx, next) => {
      log.push("use");
      return next();
    })
    .on("reaction", () => {
      log.push("reaction");
    })
    .on("message", { direct: true, when: (ctx) => ctx.event.message.id > 0 }, (_ctx, next) => {
      log.push("direct");
      return next();
    })
    .on("message", { channel: "support" }, () => {
      log.push("support");
    })
    .on("*", () => {
      log.push("star");
    })
    .catch(() => {
      log.push("never caught");
    });
}

describe("Composer.run() synchronous path", () => {
  it("returns undefined when every middleware, filter and the catch are synchronous", () => {
    const log: string[] = [];
    const bot = syncBot(log);
    expect(bot.run(ctxFor(channelMessage()))).toBeUndefined();
    expect(log).toEqual(["use", "support"]);
    log.length = 0;
    expect(bot.run(ctxFor(directMessage()))).toBeUndefined();
    expect(log).toEqual(["use", "direct", "star"]);
    log.length = 0;
    expect(bot.run(ctxFor(reaction()))).toBeUndefined();
    expect(log).toEqual(["use", "reaction"]);
  });

  it("hands user middleware a Promise from next() even when the rest ran synchronously", async () => {
    const seen: unknown[] = [];
    const bot = new Composer()
      .use((_ctx, next) => {
        const p = next();
        seen.push(p instanceof Promise);
        return p;
      })
      .on("message", () => {
        seen.push("handler");
      });
    expect(bot.run(ctxFor(channelMessage()))).toBeUndefined();
    expect(seen).toEqual(["handler", true]);
  });

  it("await next() in user middleware sees the downstream effects", async () => {
    const ctx = { ...ctxFor(channelMessage()), handled: false };
    const observed: boolean[] = [];
    const bot = new Composer<typeof ctx>()
      .use(async (c, next) => {
        observed.push(c.handled);
        await next();
        observed.push(c.handled);
      })
      .on("message", (c) => {
        c.handled = true;
      });
    const result = bot.run(ctx);
    expect(result).toBeInstanceOf(Promise);
    await result;
    expect(observed).toEqual([false, true]);
  });

  it("goes async at the first thenable, with the effects in order", async () => {
    const log: string[] = [];
    const bot = new Composer()
      .use((_ctx, next) => {
        log.push("a in");
        const p = next();
        log.push("a after next()");
        return p;
      })
      .use(async (_ctx, next) => {
        log.push("b in");
        await Promise.resolve();
        log.push("b resumed");
        await next();
        log.push("b out");
      })
      .on("message", { when: async () => true }, (_ctx, next) => {
        log.push("handler");
        return next();
      })
      .use(() => {
        log.push("last");
      });
    const result = bot.run(ctxFor(channelMessage()));
    log.push("returned");
    expect(result).toBeInstanceOf(Promise);
    await result;
    expect(log).toEqual([
      "a in",
      "b in",
      "a after next()",
      "returned",
      "b resumed",
      "handler",
      "last",
      "b out",
    ]);
  });

  it("awaits any thenable a middleware returns, not only native promises", async () => {
    const log: string[] = [];
    const bot = new Composer()
      .use((_ctx, next) => ({
        // biome-ignore lint/suspicious/noThenProperty: the point is a non-Promise thenable
        then(resolve: () => void) {
          log.push("then called");
          void next().then(resolve);
        },
      }))
      .on("message", () => {
        log.push("handler");
      });
    const result = bot.run(ctxFor(channelMessage()));
    expect(result).toBeInstanceOf(Promise);
    expect(log).toEqual([]);
    await result;
    expect(log).toEqual(["then called", "handler"]);
  });
});

describe("Composer.run() errors", () => {
  it("throws a synchronous error that escapes catch synchronously", () => {
    const boom = new Error("boom");
    const bot = new Composer()
      .on("typing", () => {})
      .on("reaction", () => {})
      .on("message", () => {
        throw boom;
      });
    expect(() => bot.run(ctxFor(channelMessage()))).toThrow(boom);
  });

  it("a sync throw is handled by catch, synchronously", () => {
    const caught: Array<[string, number | undefined]> = [];
    const after: string[] = [];
    const bot = new Composer()
      .on("message", () => {
        throw new Error("inside");
      })
      .use(() => {
        after.push("rest of the chain");
      })
      .catch((err, ctx) => {
        caught.push([(err as Error).message, ctx.event.id]);
      });
    expect(bot.run(ctxFor(channelMessage()))).toBeUndefined();
    expect(caught).toEqual([["inside", 3]]);
    // The catch ends the chain: the handler that threw never called next().
    expect(after).toEqual([]);
  });

  it("waits for an async catch handler; a throw from it rejects", async () => {
    const log: string[] = [];
    const bot = new Composer()
      .on("message", () => {
        throw new Error("sync");
      })
      .catch(async (err) => {
        await Promise.resolve();
        log.push(`handled ${(err as Error).message}`);
      });
    const result = bot.run(ctxFor(channelMessage()));
    expect(result).toBeInstanceOf(Promise);
    expect(log).toEqual([]);
    await result;
    expect(log).toEqual(["handled sync"]);

    const failing = new Composer()
      .on("message", () => {
        throw new Error("first");
      })
      .catch(() => {
        throw new Error("from catch");
      });
    expect(() => failing.run(ctxFor(channelMessage()))).toThrow("from catch");
  });

  it("a sync throw reached through a user middleware's next() rejects instead", async () => {
    const boom = new Error("boom");
    const bot = new Composer()
      .use((_ctx, next) => next())
      .on("message", () => {
        throw boom;
      });
    const result = bot.run(ctxFor(channelMessage()));
    expect(result).toBeInstanceOf(Promise);
    await expect(result).rejects.toBe(boom);
  });

  it("next() called twice by a synchronous middleware still rejects with ROUTER_NEXT_CALLED_TWICE", async () => {
    let handled = 0;
    const bot = new Composer()
      .use((_ctx, next) => {
        void next();
        return next();
      })
      .on("message", () => {
        handled++;
      });
    await expect(bot.run(ctxFor(channelMessage()))).rejects.toMatchObject({
      name: "RouterError",
      code: "ROUTER_NEXT_CALLED_TWICE",
      message:
        "next() was called twice by middleware #1 of its composer. Call it at most once, and await it.",
    });
    expect(handled).toBe(1);
  });
});
