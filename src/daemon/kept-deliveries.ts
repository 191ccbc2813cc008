/**
 * Outgoing-webhook deliveries kept as dead letters before the server is answered without a reply
 * (it never sends an answered delivery again): one that came while the bot was not ready, run once
 * it is; one whose handler still runs at its reply deadline, removed once that run is over and
 * replayed at the next start should the process die first. The letter and its replay mark go in
 * one write, flushed before the answer, so a kill after the answer loses nothing.
 */
import type { DeadLetter, DeadLetters } from "../state/dead-letters.ts";
import type { JsonValue } from "../state/state-store.ts";
import type { Clock } from "../time/clock.ts";
import type { ServerEvent } from "../wire/events.ts";

export interface KeptDeliveries {
  /** The bot's dead letters; none: nothing is kept. */
  letters: DeadLetters | undefined;
  /** Makes the store's writes durable: the letter must be, before its delivery is answered. */
  flush(): Promise<void>;
  clock: Clock;
  /** This daemon's id: the mark of a letter whose run still goes here. */
  daemonId: string;
}

/** What the letter says of itself (its `error`, as `bothost failed list` shows it). */
const WHY = {
  held: "an outgoing-webhook delivery answered without a reply while the bot was not ready: replayed once it is",
  deadline:
    "an outgoing-webhook delivery answered without a reply at its reply deadline while its handler still ran: removed once that run is over, replayed at the next start if the process died first",
  replied:
    "an outgoing-webhook delivery answered with its handler's reply while the handler still ran: removed once that run is over, replayed at the next start if the process died first",
  asked:
    "an outgoing-webhook delivery whose handler asked a dialog's question before its answer: removed once that run is over, replayed at the next start if the process died first",
  answered:
    "an outgoing-webhook delivery answered without a reply before its message was found (Slack format): removed once its run is over, replayed at the next start if the process died first",
};

/**
 * How a delivery is kept: `running`, its handler runs here (`why` it was answered meanwhile);
 * `again`, an earlier write of it failed.
 */
export interface KeepOptions {
  again?: boolean;
  running?: boolean;
  why?: "deadline" | "replied" | "asked" | "answered";
}

/** Whether `l` is the letter of delivery `messageId` kept with `mark` (a daemon's id, while it runs there). */
function keptFor(l: DeadLetter, messageId: number | undefined, mark: string | undefined): boolean {
  return (
    l.source === "webhook" &&
    l.runningIn === mark &&
    (l.event as { message?: { id?: unknown } }).message?.id === messageId
  );
}

/**
 * Keep `event` as a dead letter marked for replay (source `webhook`, 0 attempts), written and
 * flushed. `running`: its handler runs now, here; the letter is marked with the daemon's id, which
 * this daemon's dead-letter source leaves alone. Its id; undefined when the bot keeps no dead
 * letters. `again`: an earlier write of this delivery failed, maybe after its letter landed: that
 * letter is taken if there is one.
 */
export async function keepDelivery(
  o: KeptDeliveries,
  event: ServerEvent,
  { again = false, running = false, why = "deadline" }: KeepOptions,
): Promise<string | undefined> {
  const letters = o.letters;
  if (!letters) return undefined;
  const messageId = event.type === "message" ? event.message.id : undefined;
  const mark = running ? o.daemonId : undefined;
  const isThis = (l: DeadLetter) => keptFor(l, messageId, mark);
  const landed = again ? (await letters.retryRequested()).find(isThis) : undefined;
  if (landed) {
    await o.flush();
    return landed.id;
  }
  const at = new Date(o.clock.now()).toISOString();
  const letter = await letters.add(
    {
      source: "webhook",
      event: event as unknown as JsonValue,
      error: new Error(running ? WHY[why] : WHY.held),
      attempts: 0,
      heldDelivery: true,
      ...(mark ? { runningIn: mark } : {}),
      firstFailedAt: at,
      lastFailedAt: at,
    },
    { retryRequestedAt: new Date(at) },
  );
  await o.flush();
  return letter.id;
}

/**
 * The run of delivery `messageId`, kept while it ran here (`daemonId`), is over: its letter `id`
 * goes. Without `id` (a write of it was reported failed: it may have landed all the same, its
 * acknowledgement lost), every letter of it marked as this daemon's run goes. Removing what is
 * gone already is no error, so this may run whatever the writes reported.
 */
export async function removeKept(
  letters: DeadLetters | undefined,
  daemonId: string,
  messageId: number,
  id: string | undefined,
): Promise<void> {
  if (!letters) return;
  if (id !== undefined) {
    await letters.remove(id);
    return;
  }
  for (const l of await letters.list()) if (keptFor(l, messageId, daemonId)) await letters.remove(l.id);
}
