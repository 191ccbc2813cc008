/**
 * grammY-style composition: middleware run in registration order, each deciding whether to call
 * `next()`; `on(type, …)` adds a middleware that only runs for events of that type (and filter)
 * and otherwise passes the event on. A handler that matches and does not call `next()` ends the
 * chain, so the first matching handler wins unless it calls `next()`.
 */
import type { EventMap, GenericEvent, KnownEventType, ServerEvent } from "../wire/events.ts";
import { isKnownEventType } from "../wire/events.ts";
import { compileFilter, type Filter, type FilterPredicate } from "./filters.ts";
import type { RoutableContext } from "./routable-context.ts";
import { RouterError } from "./router-error.ts";

export type NextFunction = () => Promise<void>;
/** A middleware: do something with `ctx`, and call `next()` (once, awaited) to pass it on. */
export type Middleware<C> = (ctx: C, next: NextFunction) => unknown;
export type ErrorHandler<C> = (error: unknown, ctx: C) => unknown;

/** A known event type, `"*"` for every event, or any other name for events this version does not know. */
export type EventName = KnownEventType | "*" | (string & {});
/** The event type a route for `T` receives. */
export type EventOf<T extends string> = T extends "*"
  ? ServerEvent
  : T extends KnownEventType
    ? EventMap[T]
    : GenericEvent;
/** The context a route for `T` receives: `C` with `event` narrowed. */
export type ContextFor<C extends RoutableContext, T extends string> = Omit<C, "event"> & {
  event: EventOf<T>;
};

/**
 * A router: an ordered stack of middleware that compiles into one {@link Composer.dispatch}.
 *
 * @example
 * ```ts
 * const bot = new Composer();
 * bot.use(async (ctx, next) => { const t = Date.now(); await next(); ctx.log.debug({ ms: Date.now() - t }, "handled"); });
 * bot.on("message", { direct: true }, (ctx) => reply(ctx, `you said ${ctx.event.message.content}`));
 * bot.on("reaction", { op: "add" }, (ctx) => ctx.log.info({ emoji: ctx.event.emoji_name }, "reacted"));
 * bot.catch((err, ctx) => ctx.log.error({ err }, "handler failed"));
 * await bot.dispatch(ctx);
 * ```
 */
export class Composer<C extends RoutableContext = RoutableContext> {
  private readonly stack: Middleware<C>[] = [];
  private errorHandler: ErrorHandler<C> | undefined;

  /** Add middleware (or whole composers) that see every event. */
  use(...middleware: Array<Middleware<C> | Composer<C>>): this {
    for (const [i, mw] of middleware.entries()) {
      if (mw instanceof Composer) this.stack.push(mw.middleware());
      else if (typeof mw === "function") this.stack.push(mw);
      else
        throw argument(
          `use(): argument ${i + 1} must be a function (ctx, next) or a Composer, got ${typeof mw}.`,
        );
    }
    return this;
  }

  /** Handle events of `type` (or any of several types; `"*"` for all). */
  on<T extends EventName>(type: T | readonly T[], handler: Middleware<ContextFor<C, T>>): this;
  /** Handle events of `type` that also pass `filter` (see {@link Filter}). */
  on<T extends EventName>(
    type: T | readonly T[],
    filter: Filter<ContextFor<C, T>> | FilterPredicate<ContextFor<C, T>>,
    handler: Middleware<ContextFor<C, T>>,
  ): this;
  on(
    type: string | readonly string[],
    ...rest: [Middleware<C>] | [Filter<C> | FilterPredicate<C>, Middleware<C>]
  ): this {
    const types = checkTypes(type);
    const where = `on(${Array.isArray(type) ? `[${types.map((t) => JSON.stringify(t)).join(", ")}]` : JSON.stringify(type)})`;
    const [filter, handler] = rest.length === 1 ? [undefined, rest[0]] : rest;
    if (typeof handler !== "function") {
      throw argument(`${where}: the handler must be a function (ctx, next), got ${typeof handler}.`);
    }
    const test = filter === undefined ? undefined : compileFilter(filter, types, where);
    const all = types.includes("*");
    const wanted = new Set(types);
    this.stack.push(async (ctx, next) => {
      const { type: eventType } = ctx.event;
      const typeMatches =
        all || (wanted.has(eventType) && (ctx.eventIssue === undefined || !isKnownEventType(eventType)));
      if (typeMatches && (test === undefined || (await test(ctx)))) return handler(ctx, next);
      return next();
    });
    return this;
  }

  /**
   * Handle errors thrown by this composer's middleware (including nested composers without their
   * own `catch`). Without a handler, errors propagate to the caller of `dispatch`. Set once.
   */
  catch(handler: ErrorHandler<C>): this {
    if (typeof handler !== "function")
      throw argument(`catch(): the handler must be a function (error, ctx), got ${typeof handler}.`);
    if (this.errorHandler)
      throw argument(
        "catch(): this composer already has an error handler; handle every case in one function.",
      );
    this.errorHandler = handler;
    return this;
  }

  /** This composer as one middleware, to nest it in another. */
  middleware(): Middleware<C> {
    return async (ctx, next) => {
      const handler = this.errorHandler;
      if (handler === undefined) return run(this.stack, ctx, next);
      // Errors thrown after this composer passed the event on belong to the outer chain, not to us.
      let outer: { error: unknown } | undefined;
      const guardedNext = async () => {
        try {
          await next();
        } catch (error) {
          outer = { error };
          throw error;
        }
      };
      try {
        await run(this.stack, ctx, guardedNext);
      } catch (error) {
        if (outer !== undefined && outer.error === error) throw error;
        await handler(error, ctx);
      }
    };
  }

  /** Run the whole stack for one event. Rejects only if an error escapes every `catch`. */
  async dispatch(ctx: C): Promise<void> {
    await this.middleware()(ctx, async () => {});
  }
}

function run<C>(stack: readonly Middleware<C>[], ctx: C, last: NextFunction): Promise<void> {
  const step = async (i: number): Promise<void> => {
    const mw = stack[i];
    if (mw === undefined) return last();
    let called = false;
    await mw(ctx, () => {
      if (called) {
        return Promise.reject(
          new RouterError(
            "ROUTER_NEXT_CALLED_TWICE",
            `next() was called twice by middleware #${i + 1} of its composer. Call it at most once, and await it.`,
          ),
        );
      }
      called = true;
      return step(i + 1);
    });
  };
  return step(0);
}

function checkTypes(type: unknown): string[] {
  const types = Array.isArray(type) ? type : [type];
  if (types.length === 0 || !types.every((t) => typeof t === "string" && t !== "")) {
    throw argument(
      `on(): the event type must be a non-empty string such as "message" or "*", or an array of them; got ${JSON.stringify(type)}.`,
    );
  }
  return types as string[];
}

function argument(message: string): RouterError {
  return new RouterError("ROUTER_INVALID_ARGUMENT", message);
}
