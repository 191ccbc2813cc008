/** A bot's dialogs on a memory store, for tests of the dialogs' index, log and timers. */
import pino from "pino";
import { type Membership, NOBODY_KNOWN } from "../../src/pipeline/dialogs/ask-options.ts";
import type { DialogHead, LogEntry } from "../../src/pipeline/dialogs/dialog-record.ts";
import { newHead } from "../../src/pipeline/dialogs/dialog-record.ts";
import { Dialogs } from "../../src/pipeline/dialogs/dialogs.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";
import type { StateStore } from "../../src/state/state-store.ts";
import type { Clock } from "../../src/time/clock.ts";

export function memoryDialogs(
  clock: Clock,
  store: StateStore = new MemoryStore(),
  members?: Partial<Membership>,
): Dialogs {
  return new Dialogs({
    ...(members && { members: { ...NOBODY_KNOWN, ...members } }),
    store: store.namespace("dialogs"),
    commit: async () => {},
    clock,
    log: pino({ level: "silent" }),
    persist: true,
  });
}

/** The log entry of question `step` (from 0), sent as message `msg`, due at `deadline`. */
export function asked(step: number, msg: number, at: number, deadline: number): LogEntry {
  return { t: "ask", step, id: `#${step + 1}`, fp: "fp", text: `Q${step + 1}`, msg, at, deadline };
}

/**
 * A dialog begun by message `id` from user 7 in `conversation`, its first question sent as
 * message `id + 1` and waiting until `deadline`.
 */
export function waitAt(
  dialogs: Dialogs,
  o: { id: number; conversation: string; at: number; deadline: number; startedAt?: number },
): Promise<DialogHead> {
  const head = newHead({
    id: String(o.id),
    userId: 7,
    userName: "Mel Member",
    conversation: o.conversation,
    where: o.conversation.startsWith("dm:") ? "direct message" : "#general > t",
    startedAt: o.startedAt ?? o.at,
  });
  const origin = { type: "message", id: 0, message: { id: o.id } };
  return dialogs.append(head, [{ t: "start", origin, at: o.at }, asked(0, o.id + 1, o.at, o.deadline)], true);
}
