/**
 * Reactions made while no queue was reading (the bot down, a queue lost): after each new queue,
 * the questions that wait for a reaction (a prompt's emoji choices) are read back, and on each
 * the first reaction that answers it is handed to the bot as if the queue had brought it, unless
 * an earlier read-back handed it and its run is not over (it waits in its conversation, the
 * question not taken yet: `Buttons.handOn`): a press is taken once however many read it. One
 * GET /messages per 1,000 questions (feature level 300 and later; an older server is asked one
 * question at a time, at most 20 of them: see api/message-pages.ts).
 */
import type { Client } from "../api/create-client.ts";
import { messagePages } from "../api/message-pages.ts";
import { type Buttons, pressOn } from "../pipeline/dialogs/dialog-reactions.ts";
import type { Incoming } from "../pipeline/incoming.ts";
import type { Message } from "../wire/records.ts";

export interface ReactionCatchUp {
  client: Client;
  buttons: Buttons;
  featureLevel: number;
  signal: AbortSignal;
  /** Hands a reaction event to the bot's pipeline; `onDone` once its run is over. */
  accept(incoming: Incoming, onDone: () => void): unknown;
  /** Gets every question read, by id (the moves' read-back reads none of them again). */
  read?: Map<number, Message>;
}

/** Returns how many reactions were handed on (each answers a waiting question). */
export async function catchUpReactions(o: ReactionCatchUp): Promise<number> {
  o.buttons.newQueue();
  const ids = o.buttons.waiting();
  if (ids.length === 0) return 0;
  let found = 0;
  // Read at a start, no person waiting on it: the budget's background lane.
  for (const messages of messagePages({ ...o, lane: "background" }, ids)) {
    for (const message of await messages) {
      o.read?.set(message.id, message);
      const press = pressOn(o.buttons, message);
      if (press === undefined) continue;
      const done = o.buttons.handOn(press);
      if (done === undefined) continue;
      o.buttons.caughtUp(press);
      o.accept({ event: press, replayed: true, issue: undefined, reply: undefined }, done);
      found++;
    }
  }
  return found;
}
