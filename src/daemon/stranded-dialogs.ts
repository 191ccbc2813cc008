/**
 * Dialogs the bot's `narrow` strands: a dialog waits for its answer in a conversation (a direct
 * message, a channel's topic) whose messages the bot's event queue does not receive under its
 * current narrow (a reload or restart changed it). Its answer cannot arrive: it waits until its
 * deadline. Each one is told at warn at the bot's start, and marked in `bothost dialogs`; none is
 * ended here, an operator decides (`bothost dialogs end`).
 *
 * Only what is sure is said: channel, stream and topic terms against a direct message or another
 * channel or topic, and `is:dm` (`is:private`) against a channel. Other terms (`sender`,
 * `is:mentioned`, …) depend on each answer, not on where it is sent.
 */
import type { Logger } from "pino";
import type { DialogEntry, DialogView } from "../pipeline/dialogs/dialog-entry.ts";
import type { Narrow } from "../wire/records.ts";

interface Place {
  /** The conversation's key: `channel:<id>:<topic lowercased>` or `dm:<ids>`. */
  conversation: string;
  /** For people: `#general > standup` or `direct message`. */
  where: string;
}

/** The channel's name from a place's label (`#<name> > <topic>`), when the topic ends it. */
function nameInLabel(where: string, topic: string): string | undefined {
  const tail = ` > ${topic}`;
  if (!where.startsWith("#") || !where.toLowerCase().endsWith(tail)) return undefined;
  return where.slice(1, where.length - tail.length);
}

/**
 * The narrow's term that keeps the messages of `place` out of the bot's queue, as configured
 * (`[channel, general]`); undefined when the narrow delivers them, or may.
 */
export function narrowExcludes(
  narrow: Narrow | undefined,
  place: Place,
  channelName: (id: number) => string | undefined,
): string | undefined {
  if (narrow === undefined) return undefined;
  const dm = place.conversation.startsWith("dm:");
  const channel = /^channel:(\d+):([\s\S]*)$/.exec(place.conversation);
  for (const [operator, operand] of narrow) {
    const term = `[${operator}, ${operand}]`;
    const op = operator === "stream" ? "channel" : operator;
    if (op === "is") {
      if (!dm && (operand === "dm" || operand === "private")) return term;
      continue;
    }
    if (op !== "channel" && op !== "topic") continue;
    if (dm) return term;
    if (channel === null) continue;
    const [, id, topic] = channel as unknown as [string, string, string];
    if (op === "topic") {
      if (operand.toLowerCase() !== topic) return term;
      continue;
    }
    if (/^\d+$/.test(operand)) {
      if (operand !== id) return term;
      continue;
    }
    const name = channelName(Number(id)) ?? nameInLabel(place.where, topic);
    if (name !== undefined && name.toLowerCase() !== operand.toLowerCase()) return term;
  }
  return undefined;
}

export interface StrandedOptions {
  bot: string;
  /** The narrow the bot's queue is registered with (undefined: everything, or no event queue). */
  narrow: Narrow | undefined;
  log: Logger;
  entries(): Iterable<DialogEntry>;
  channelName(id: number): string | undefined;
}

/** The waiting dialogs of a bot whose answers its narrow keeps out: warned of, and marked in lists. */
export function strandedDialogs(o: StrandedOptions) {
  const stranded = (): Map<string, { term: string; where: string }> => {
    const found = new Map<string, { term: string; where: string }>();
    if (o.narrow === undefined || o.narrow.length === 0) return found;
    for (const { id, head } of o.entries()) {
      const term = narrowExcludes(o.narrow, head, o.channelName);
      if (term !== undefined) found.set(id, { term, where: head.where });
    }
    return found;
  };
  return {
    /** At the bot's start, once its dialogs are read: one warning per stranded dialog. */
    warn(): void {
      for (const [id, { term, where }] of stranded()) {
        // `log` is the bot's own, which names it already.
        o.log.warn(
          { dialog: id, where, narrow: term },
          `dialog ${id} waits for an answer in ${where}, which the bot's narrow ${term} does not receive: its answers cannot arrive, and it waits until its deadline. End it with: bothost dialogs end ${o.bot} ${id} (or widen the narrow and reload)`,
        );
      }
    },
    /** `views` with those stranded marked `outsideNarrow` (the term that keeps their answers out). */
    mark(views: DialogView[]): DialogView[] {
      const found = stranded();
      if (found.size === 0) return views;
      return views.map((v) => {
        const s = found.get(v.id);
        return s === undefined ? v : { ...v, outsideNarrow: s.term };
      });
    },
  };
}
