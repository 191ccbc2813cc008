/**
 * How a logged error (`{ err }`) reads: pino's error serializer, with each message of the cause
 * chain said once and stacks that say where, not what. pino joins every cause's message onto the
 * error's, and bothost's errors quote their cause already ("Redis at … did not complete a read:
 * WRONGTYPE …"), so the cause read twice in the message, and twice more in the stacks' headers.
 */
import { pino } from "pino";

/** pino's `err` serializer, with the messages and stacks of the cause chain each said once. */
export function serializeError(err: unknown): unknown {
  const out = pino.stdSerializers.err(err as Error) as unknown as Record<string, unknown>;
  if (!(err instanceof Error)) return out;
  // A DOMException (an abort's or a timeout's reason) inherits legacy constants (`INDEX_SIZE_ERR`, …).
  if (err instanceof DOMException)
    for (const key of Object.keys(out)) if (/^[A-Z_]+_ERR$/.test(key)) delete out[key];
  const chain = causeChain(err);
  out.message = chain.slice(1).reduce(withCause, err.message);
  out.stack = chain.map(framesOf).join("\ncaused by: ");
  return out;
}

/** `err` and its causes, outermost first (a cause seen already ends it). */
function causeChain(err: Error): Error[] {
  const chain = [err];
  for (let c = err.cause; c instanceof Error && !chain.includes(c); c = c.cause) chain.push(c);
  return chain;
}

/** `message` with a cause's message added, unless it says it already (or the cause says nothing). */
function withCause(message: string, cause: Error): string {
  const said = cause.message.trim().replace(/\.$/, "");
  return said === "" || message.includes(said) ? message : `${message}: ${cause.message}`;
}

/** An error's stack under its type alone: its message is the line's `message` already. */
function framesOf(err: Error): string {
  const stack = typeof err.stack === "string" && err.stack !== "" ? err.stack : err.name;
  const at = stack.indexOf("\n    at ");
  const head = at < 0 ? stack : stack.slice(0, at);
  const said = `: ${err.message}`;
  return err.message !== "" && head.endsWith(said)
    ? stack.slice(0, head.length - said.length) + stack.slice(head.length)
    : stack;
}
