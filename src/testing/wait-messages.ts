/** What the testing kit's waits say when they give up: the message named, the handler's error. */
import { ApiError } from "../sandbox/http/api-error.ts";
import type { SandboxControl } from "../sandbox/types.ts";

const SHOWN = 40;

/** `message 12 ("hi there" from member@sandbox.example in #general > greetings)`. */
export function describeMessage(control: SandboxControl, id: number): string {
  const m = control.messageView(id);
  if (!m) return `message ${id}`;
  const text = m.content.length > SHOWN ? `${m.content.slice(0, SHOWN)}…` : m.content;
  const where =
    m.type === "stream"
      ? `#${m.display_recipient} > ${m.subject}`
      : `a direct message to ${
          m.display_recipient
            .filter((r) => r.id !== m.sender_id)
            .map((r) => r.email)
            .join(", ") || "themselves"
        }`;
  return `message ${id} (${JSON.stringify(text)} from ${m.sender_email} in ${where})`;
}

/** The error of the last "handler failed" log line about message `id`, if any. */
export function handlerFailure(logs: readonly Record<string, unknown>[], id: number): string | undefined {
  for (let i = logs.length - 1; i >= 0; i--) {
    const line = logs[i] as { msg?: unknown; messageId?: unknown; err?: { message?: unknown } };
    if (line.msg === "handler failed" && line.messageId === id)
      return String(line.err?.message ?? "an error");
  }
  return undefined;
}

/**
 * Why a bot may have sent nothing, when the kit can tell: the message never reached it, it is
 * stopped, or the server refused its calls for the account's rate limit since request `since`
 * (it then waits for the budget).
 */
export function silentBecause(
  control: SandboxControl,
  email: string,
  stopped: boolean,
  since: number,
  unreached: string | undefined,
): string {
  if (unreached) return ` (the message never reached it: ${unreached})`;
  if (stopped) return " (it is stopped: start() it, and it catches the message up)";
  const refused = control.requests.slice(since).filter((r) => r.email === email && r.status === 429).length;
  return refused > 0
    ? ` (the server refused ${refused} of its calls for the account's rate limit: it waits for the budget, on the test's clock)`
    : "";
}

/** A post the server refused (an unknown channel or person), as `post` or `ask` (`where`) reports it. */
export function refusedSend(err: unknown, where: string, from: string): unknown {
  if (!(err instanceof ApiError)) return err;
  const code = err.wireCode === null ? "" : ` (${err.wireCode})`;
  return new Error(`${where}: the server refused the message from ${from}: ${err.message}${code}`);
}
