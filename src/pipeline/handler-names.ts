/**
 * Which of a bot's handlers a run is in, to name it on the line of the run's timeout: a handler
 * that hangs throws nothing and has no stack to show, so the line says its registration
 * (`command "deploy"`, `on("message")`, `use()`) and the place in the bot's code that made it.
 *
 * The composer marks the context as each handler or middleware begins, and again as a middleware's
 * `next()` comes back to it; a command's handler is marked by the command router. The place is
 * read from a stack taken at the registration (once, at setup), only when a line wants it.
 */
import { whereThrown } from "../errors/where-thrown.ts";

/** The handler a context's run is in now (the last begun, or come back to after its `next()`). */
export const IN_HANDLER: unique symbol = Symbol("bothost.inHandler");

/** A context that may be in a handler. */
export interface InHandler {
  [IN_HANDLER]?: Registration | undefined;
}

/** What made a handler: its kind and name, and where the bot's code called for it. */
export class Registration {
  #made: Error | undefined;
  #said: string | undefined;

  /** `placed` false: bothost's own (no place in the bot's code to name). */
  constructor(
    readonly what: string,
    placed = true,
  ) {
    this.#made = placed ? new Error(what) : undefined;
  }

  /** `command "deploy" (bots/deploy.ts:14:3)`; without a place when none of the stack is the bot's. */
  toString(): string {
    if (this.#said === undefined) {
      const place = this.#made && whereThrown(this.#made);
      this.#said = place === undefined ? this.what : `${this.what} (${place})`;
      this.#made = undefined;
    }
    return this.#said;
  }
}

/** Holds what a run's context is, for its timeout's line (a queue's task, a later attempt's). */
export interface RunHolder {
  running: object | undefined;
}

/** `{ handler }` naming the handler the run of `ctx` is in, for a log line; empty when none is known. */
export function handlerOf(ctx: object | undefined): { handler?: string } {
  const at = (ctx as InHandler | undefined)?.[IN_HANDLER];
  return at === undefined ? {} : { handler: at.toString() };
}
