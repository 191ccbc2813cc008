import { editDistance, suggest } from "../errors/did-you-mean.ts";
import type { EventMap, ServerEvent, UnknownEvent } from "../wire/events.ts";
import { eventSchemas, isEventType, isTypedEvent } from "../wire/events.ts";
import type { Sender, Where } from "./addressed.ts";
import { isThenable } from "./conversation-queue.ts";
import { compileFilter, type Filter, type FilterPredicate } from "./filters.ts";
import { IN_HANDLER, type InHandler, Registration } from "./handler-names.ts";
import type { RoutableContext } from "./routable-context.ts";

export type { RoutableContext } from "./routable-context.ts";

import { invalidArgument as argument, RouterError } from "./router-error.ts";

/** Pass the event on to the next middleware; resolves once the rest of the chain is done. */
export type NextFunction = () => Promise<void>;
/** A middleware: do something with `ctx`, and call `next()` (once, awaited) to pass it on. */
export type Middleware<C> = (ctx: C, next: NextFunction) => unknown;
/**
 * Sees an error a middleware or handler threw (`bot.catch`). It observes: once it returns, the
 * error goes on as if uncaught (the handler runs again after a pause, then becomes a dead
 * letter). What it throws replaces the error: `throw new NoRetry(…)` skips the retries, and
 * `throw new NoRetry(…, { deadLetter: false })` ends the event there (fully handled).
 */
export type ErrorHandler<C> = (error: unknown, ctx: C) => unknown;

/**
 * A typed event's type (the server's known ones and bothost's `gap`), `"*"` for every typed event,
 * `"unknown"` for every unknown one, or another name for unknown events of that type.
 */
export type EventName = keyof EventMap | "*" | "unknown" | (string & {});
/** The event type a route for `T` receives. */
export type EventOf<T extends string> = T extends "*"
  ? ServerEvent
  : T extends keyof EventMap
    ? EventMap[T]
    : UnknownEvent;
/**
 * The context a route for `T` receives: `C` with `event` narrowed; a message route's context
 * also has `where` and `sender` (a message always has both).
 */
export type ContextFor<C extends RoutableContext, T extends string> = Omit<C, "event"> & {
  event: EventOf<T>;
} & (T extends "message" ? { readonly where: Where; readonly sender: Sender } : unknown);

/**
 * A router: an ordered stack of middleware, run for each event. The chain runs synchronously for
 * as long as every middleware returns a non-thenable (user code still gets a Promise from
 * `next()`); the first thenable makes the rest of it wait, so a synchronous handler costs no promise.
 */
export class Composer<C extends RoutableContext = RoutableContext> {
  readonly #stack: Step<C>[] = [];
  #errorHandler: ErrorHandler<C> | undefined;
  /** Contexts whose event went past the last middleware: nothing took it. */
  readonly #passedThrough = new WeakSet<object>();
  readonly #chain: Chain<C> = {
    stack: this.#stack,
    end: (ctx: C): undefined => {
      this.#passedThrough.add(ctx);
    },
  };

  /** Whether `ctx`'s event went past every middleware of this composer (none ended the chain). */
  passedThrough(ctx: C): boolean {
    return this.#passedThrough.has(ctx);
  }

  /** Add middleware that sees every event. */
  use(...middleware: Middleware<C>[]): this {
    for (const [i, mw] of middleware.entries()) {
      if (typeof mw !== "function")
        throw argument(`use(): argument ${i + 1} must be a function (ctx, next), got ${typeof mw}.`);
      this.#stack.push(callUser(mw, this.#stack.length, new Registration("use()")));
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
    const allTyped = types.includes("*");
    const allUnknown = types.includes("unknown");
    const wanted = new Set(types);
    const run = callUser(handler as Middleware<C>, this.#stack.length, new Registration(where));
    this.#stack.push((ctx, chain, i) => {
      // A typed event reaches `"*"` and its type's routes; an unknown one (including a known type
      // that failed its schema) reaches `"unknown"` and routes for type names this version does not know.
      const typed = isTypedEvent(ctx.event, ctx.eventIssue);
      const typeMatches = typed
        ? allTyped || wanted.has(ctx.event.type)
        : allUnknown || (wanted.has(ctx.event.type) && !isEventType(ctx.event.type));
      if (!typeMatches) return runFrom(chain, i + 1, ctx);
      if (test === undefined) return run(ctx, chain, i);
      const verdict = test(ctx);
      if (isThenable(verdict)) return afterVerdict(verdict, run, ctx, chain, i);
      return verdict ? run(ctx, chain, i) : runFrom(chain, i + 1, ctx);
    });
    return this;
  }

  /**
   * See errors thrown by the middleware (see {@link ErrorHandler}): `run` still throws them once
   * the handler returns, or throws what the handler threw instead. Set once.
   */
  catch(handler: ErrorHandler<C>): this {
    if (typeof handler !== "function")
      throw argument(`catch(): the handler must be a function (error, ctx), got ${typeof handler}.`);
    if (this.#errorHandler)
      throw argument(
        "catch(): this composer already has an error handler; handle every case in one function.",
      );
    this.#errorHandler = handler;
    return this;
  }

  /**
   * Run the stack for one event: `undefined` when everything that ran finished synchronously,
   * else a Promise of the end of the chain. An error is thrown (or rejects the Promise) after
   * the `catch` handler saw it.
   */
  run(ctx: C): Done {
    const handler = this.#errorHandler;
    return handler === undefined ? runFrom(this.#chain, 0, ctx) : this.#runCaught(ctx, handler);
  }

  /** {@link run} with the `catch` handler: apart, so that a run without one makes no closure. */
  #runCaught(ctx: C, handler: ErrorHandler<C>): Done {
    const handle = (error: unknown): Done => {
      const seen = wait(handler(error, ctx));
      if (seen === undefined) throw error;
      return seen.then(() => Promise.reject(error));
    };
    let done: Done;
    try {
      done = runFrom(this.#chain, 0, ctx);
    } catch (error) {
      return handle(error);
    }
    return done?.then(undefined, handle);
  }
}

/** `undefined` when a step finished synchronously, else a Promise. */
type Done = undefined | Promise<void>;
/**
 * Step `i` of `chain`: the rest of the chain is `runFrom(chain, i + 1, ctx)` (it may throw
 * synchronously). Steps get their place rather than a `next` closure: only user middleware is
 * given one, made when it runs.
 */
type Step<C> = (ctx: C, chain: Chain<C>, i: number) => Done;

/** A composer's steps, and what runs past the last of them. */
interface Chain<C> {
  readonly stack: readonly Step<C>[];
  readonly end: (ctx: C) => undefined;
}

/** What `next()` gives user code when the rest of the chain finished synchronously. */
const RESOLVED: Promise<void> = Promise.resolve();

/** Whether a `next()` result says the rest of the chain has already finished (synchronously). */
export function finishedSynchronously(result: Promise<void>): boolean {
  return result === RESOLVED;
}

/** A filter's verdict that came as a promise: the route's handler runs once it says so. */
function afterVerdict<C>(
  verdict: PromiseLike<unknown>,
  run: Step<C>,
  ctx: C,
  chain: Chain<C>,
  i: number,
): Done {
  return Promise.resolve(verdict).then((pass) => (pass ? run(ctx, chain, i) : runFrom(chain, i + 1, ctx)));
}

function runFrom<C>(chain: Chain<C>, i: number, ctx: C): Done {
  const step = chain.stack[i];
  return step === undefined ? chain.end(ctx) : step(ctx, chain, i);
}

/**
 * User middleware as a step: its `next()` is a Promise of the rest (run at most once). The context
 * is marked in it (`made`) as it begins and as the rest comes back to it, for a timeout's line.
 */
function callUser<C>(mw: Middleware<C>, i: number, made: Registration): Step<C> {
  return (ctx, chain, at) => {
    let called = false;
    (ctx as InHandler)[IN_HANDLER] = made;
    return wait(
      mw(ctx, () => {
        if (called) return Promise.reject(twice(i));
        called = true;
        // A Promise even when the rest ran (or failed) synchronously.
        try {
          const rest = runFrom(chain, at + 1, ctx);
          if (rest !== undefined) return backIn(rest, ctx as InHandler, made);
          (ctx as InHandler)[IN_HANDLER] = made;
          return RESOLVED;
        } catch (error) {
          (ctx as InHandler)[IN_HANDLER] = made;
          return Promise.reject(error);
        }
      }),
    );
  };
}

/** `rest`, the chain after a middleware, marking the context in that middleware again once it settled. */
function backIn(rest: Promise<void>, ctx: InHandler, made: Registration): Promise<void> {
  return rest.finally(() => {
    ctx[IN_HANDLER] = made;
  });
}

/** A middleware's result as {@link Done}: a thenable (other than RESOLVED) is waited for. */
function wait(value: unknown): Done {
  if (value === RESOLVED || !isThenable(value)) return undefined;
  return value instanceof Promise ? (value as Promise<void>) : Promise.resolve(value).then(ignore);
}

const ignore = (): void => {};

function twice(i: number): RouterError {
  return new RouterError(
    "ROUTER_NEXT_CALLED_TWICE",
    `next() was called twice by middleware #${i + 1} of its composer. Call it at most once, and await it.`,
  );
}

function checkTypes(type: unknown): string[] {
  const types = Array.isArray(type) ? type : [type];
  if (types.length === 0 || !types.every((t) => typeof t === "string" && t !== "")) {
    throw argument(
      `on(): the event type must be a non-empty string such as "message" or "*", or an array of them; got ${JSON.stringify(type)}.`,
    );
  }
  for (const t of types as string[]) {
    const close = typo(t);
    if (close !== undefined) {
      throw argument(
        `on(): "${t}" is not an event type: did you mean "${close}"? (To handle unknown events named so, use on("unknown") and read ctx.event.type.)`,
      );
    }
  }
  return types as string[];
}

/**
 * The typed event name `name` misspells (one or two edits, or another case), if any: such a name
 * would only ever see unknown events of its own type, never firing. Other names are the server's
 * types this version does not know (`submessage` is three edits from `message`), and are taken.
 */
function typo(name: string): string | undefined {
  if (name === "*" || name === "unknown" || isEventType(name)) return undefined;
  const close = suggest(name, [...Object.keys(eventSchemas), "gap"]);
  return close !== undefined && editDistance(name.toLowerCase(), close) <= 2 ? close : undefined;
}
