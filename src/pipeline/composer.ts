/**
 * grammY-style composition: middleware run in registration order, each deciding whether to call
 * `next()`; `on(type, …)` adds a middleware that only runs for events of that type (and filter)
 * and otherwise passes the event on. A handler that matches and does not call `next()` ends the
 * chain, so the first matching handler wins unless it calls `next()`.
 */
import type { EventMap, GenericEvent, KnownEventType, ServerEvent } from "../wire/events.ts";
import { isKnownEventType } from "../wire/events.ts";
import { isThenable } from "./_is-thenable.ts";
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
 * Dispatch is on the hot path (hundreds of thousands of events/s), so the chain runs
 * synchronously for as long as every middleware returns a non-thenable: no promise is made per
 * middleware, and `next()` hands user code one shared resolved promise when the rest of the chain
 * finished synchronously. The first thenable makes the chain async from that point, with the same
 * order of effects as an all-async chain.
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
  private readonly stack: Step<C>[] = [];
  private errorHandler: ErrorHandler<C> | undefined;

  /** Add middleware (or whole composers) that see every event. */
  use(...middleware: Array<Middleware<C> | Composer<C>>): this {
    for (const [i, mw] of middleware.entries()) {
      if (mw instanceof Composer)
        this.stack.push({ kind: "nested", step: (ctx, next) => mw.step(ctx, next) });
      else if (typeof mw === "function") this.stack.push({ kind: "use", middleware: mw });
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
    // One type (the usual route) is compared, not looked up in a set.
    const only = types.length === 1 ? types[0] : undefined;
    this.stack.push({
      kind: "route",
      middleware: handler as Middleware<C>,
      matches: (ctx) => {
        const { type: eventType } = ctx.event;
        const typeMatches =
          all ||
          ((only === undefined ? wanted.has(eventType) : eventType === only) &&
            (ctx.eventIssue === undefined || !isKnownEventType(eventType)));
        if (!typeMatches) return false;
        return test === undefined ? true : test(ctx);
      },
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

  /** This composer as one middleware, to nest it in another. It always returns a Promise. */
  middleware(): Middleware<C> {
    return (ctx, next) => promiseOf(() => this.step(ctx, () => settle(next())));
  }

  /**
   * Run the stack for one event. Returns `undefined` when every middleware that ran finished
   * synchronously, else a Promise that settles when the chain is done (it rejects only if an error
   * escapes every `catch`). A synchronous throw that escapes every `catch` is thrown synchronously.
   */
  run(ctx: C): void | Promise<void> {
    return this.step(ctx, finish);
  }

  /**
   * Run the whole stack for one event. Always a Promise (a shared resolved one when the chain ran
   * synchronously); it rejects only if an error escapes every `catch`.
   */
  dispatch(ctx: C): Promise<void> {
    try {
      return this.run(ctx) ?? RESOLVED;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** This composer as one step of a chain: its stack, then `next`, with its `catch` around it. */
  private step(ctx: C, next: Continue): Done {
    const handler = this.errorHandler;
    if (handler === undefined) return runFrom(this.stack, 0, ctx, next);
    // Errors thrown after this composer passed the event on belong to the outer chain, not to us.
    let outer: { error: unknown } | undefined;
    const passOn = (error: unknown): never => {
      outer = { error };
      throw error;
    };
    const guardedNext = (): Done => {
      let done: Done;
      try {
        done = next();
      } catch (error) {
        passOn(error);
      }
      return done === undefined ? undefined : done.then(undefined, passOn);
    };
    const handle = (error: unknown): Done => {
      if (outer !== undefined && outer.error === error) throw error;
      return settle(handler(error, ctx));
    };
    let done: Done;
    try {
      done = runFrom(this.stack, 0, ctx, guardedNext);
    } catch (error) {
      return handle(error);
    }
    return done === undefined ? undefined : done.then(undefined, handle);
  }
}

/**
 * How a step reports completion: `undefined` when it finished synchronously, else a Promise of
 * `undefined`. Errors are thrown synchronously or reject the Promise.
 */
type Done = undefined | Promise<void>;
/** The internal `next`: runs the rest of the chain; may throw synchronously. */
type Continue = () => Done;
/**
 * One entry of a composer's stack. A route (`on()`) says first whether it wants the event, so
 * passing an event over a route, and running a handler, make no closure but the handler's `next`:
 * a closure for every step's `next`, and another for the handler's, were a tenth of the dispatch
 * path's cost per event (bench: dispatch).
 */
type Step<C extends RoutableContext> =
  | { kind: "use"; middleware: Middleware<C> }
  | { kind: "nested"; step: (ctx: C, next: Continue) => Done }
  | {
      kind: "route";
      middleware: Middleware<C>;
      /** The event's type matches, and the filter (if any) passes: a boolean, or a promise of one. */
      matches: (ctx: C) => unknown;
    };

/**
 * What user code gets from `next()` when the rest of the chain finished synchronously. Shared, so
 * a middleware that returns it (`return next()`) is recognised by identity and stays synchronous.
 */
const RESOLVED: Promise<void> = Promise.resolve();
const finish: Continue = () => undefined;

/** Run `stack` from index `i`, each step with a `next` that may be called once, then `last`. */
function runFrom<C extends RoutableContext>(
  stack: readonly Step<C>[],
  i: number,
  ctx: C,
  last: Continue,
): Done {
  for (;;) {
    const step = stack[i];
    if (step === undefined) return last();
    if (step.kind === "use") return callMiddleware(step.middleware, stack, i, ctx, last);
    if (step.kind === "nested") return step.step(ctx, onceNext(stack, i, ctx, last));
    const verdict = step.matches(ctx);
    if (verdict === true) return callMiddleware(step.middleware, stack, i, ctx, last);
    if (isThenable(verdict)) return afterFilter(verdict, step.middleware, stack, i, ctx, last);
    if (verdict) return callMiddleware(step.middleware, stack, i, ctx, last);
    i++;
  }
}

function twice(i: number): RouterError {
  return new RouterError(
    "ROUTER_NEXT_CALLED_TWICE",
    `next() was called twice by middleware #${i + 1} of its composer. Call it at most once, and await it.`,
  );
}

/** The internal `next` of step `i` (a nested composer's): the rest of the chain, at most once. */
function onceNext<C extends RoutableContext>(
  stack: readonly Step<C>[],
  i: number,
  ctx: C,
  last: Continue,
): Continue {
  let called = false;
  return () => {
    if (called) throw twice(i);
    called = true;
    return runFrom(stack, i + 1, ctx, last);
  };
}

/**
 * Run user middleware `mw` (step `i`). Its `next()` always returns a Promise (of the rest of the
 * chain, run at most once), and a thenable it returns is awaited.
 */
function callMiddleware<C extends RoutableContext>(
  mw: Middleware<C>,
  stack: readonly Step<C>[],
  i: number,
  ctx: C,
  last: Continue,
): Done {
  let called = false;
  return settle(
    mw(ctx, () => {
      try {
        if (called) throw twice(i);
        called = true;
        return runFrom(stack, i + 1, ctx, last) ?? RESOLVED;
      } catch (error) {
        return Promise.reject(error);
      }
    }),
  );
}

/** `next()` for user code: a Promise even when the chain ran (or failed) synchronously. */
function promiseOf(run: Continue): Promise<void> {
  try {
    return run() ?? RESOLVED;
  } catch (error) {
    return Promise.reject(error);
  }
}

/** A middleware's return value as {@link Done}: only a thenable (other than RESOLVED) is waited for. */
function settle(value: unknown): Done {
  return value === RESOLVED || !isThenable(value) ? undefined : wait(value);
}

async function wait(value: PromiseLike<unknown>): Promise<void> {
  await value;
}

async function afterFilter<C extends RoutableContext>(
  pass: PromiseLike<unknown>,
  mw: Middleware<C>,
  stack: readonly Step<C>[],
  i: number,
  ctx: C,
  last: Continue,
): Promise<void> {
  return (await pass) ? callMiddleware(mw, stack, i, ctx, last) : runFrom(stack, i + 1, ctx, last);
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
