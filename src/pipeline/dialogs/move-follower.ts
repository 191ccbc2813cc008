/**
 * Dialogs following their questions' moves (see dialog-moves.ts), seen two ways: live, from the
 * `update_message` event (recorded in the old conversation's order, the new conversation's later
 * messages held until it is), and at each new queue, by reading the questions waiting in channel
 * topics back (recorded at once, the channel messages that may answer them held until it is).
 */
import type { Logger } from "pino";
import { failpoint } from "../../effects/failpoints.ts";
import type { EventMap } from "../../wire/events.ts";
import type { BotContexts } from "../bot-contexts.ts";
import { channelKey } from "../conversation-key.ts";
import type { ConversationQueue, TaskControl } from "../conversation-queue.ts";
import { type DialogEntry, whenSettled } from "./dialog-entry.ts";
import { DialogEnded, LogMoved } from "./dialog-log.ts";
import { askedAmong, type Move, moveOf, placeOf } from "./dialog-moves.ts";
import type { AskedIn } from "./dialog-record.ts";
import type { Dialogs } from "./dialogs.ts";

/** What following moves needs of the bot (the dialog engine's parts). */
export interface MovesParts {
  dialogs: Dialogs;
  queue: ConversationQueue;
  contexts: BotContexts;
  log: Logger;
}

export class DialogMoves {
  readonly #o: MovesParts;
  /** While the waiting channel questions are read back: when that is done, and whose messages wait for it. */
  #readingBack: { done: Promise<unknown>; may: (userId: number) => boolean } | undefined;

  constructor(parts: MovesParts) {
    this.#o = parts;
  }

  /** At accept, in event order: an `update_message` event on conversation `key`. */
  moving(event: EventMap["update_message"], key: string): void {
    const move = moveOf(event, key, this.#o.contexts.deps().channelName);
    if (move !== undefined) this.follow(move);
  }

  /**
   * Moves made while no queue read are being looked for (`done`: read back and followed): until
   * then, channel messages of the people those questions wait for (all, if one waits for others)
   * wait; every other event goes on.
   */
  readingBack(done: Promise<unknown>): void {
    const who = new Set<number>();
    let anyone = false;
    for (const { head } of this.#o.dialogs.entries()) {
      if (!head.conversation.startsWith("channel:")) continue;
      if (head.from === undefined) who.add(head.userId);
      else anyone = true;
    }
    const reading = { done, may: (id: number) => anyone || who.has(id) };
    this.#readingBack = reading;
    void done.finally(() => {
      if (this.#readingBack === reading) this.#readingBack = undefined;
    });
  }

  /** What a channel message from `userId` waits for first (the read-back under way), if anything. */
  readBack(userId: number): Promise<unknown> | undefined {
    const reading = this.#readingBack;
    return reading?.may(userId) ? reading.done : undefined;
  }

  /** Follow `move`, read back at a new queue: recorded at once, not in a conversation's order. */
  async followNow(move: Move, signal: AbortSignal): Promise<void> {
    const waiting = askedAmong(this.#o.dialogs.entries(), move.from, move.ids).filter((e) => e.waiting);
    if (waiting.length > 0) await this.#record(waiting, move, signal);
  }

  /**
   * The dialogs whose questions `move` took follow them: the move is recorded in the old
   * conversation's order (after what was sent there before it), and the new conversation's later
   * messages wait until it is (so an answer there finds its dialog).
   */
  follow(move: Move): void {
    const { dialogs, queue } = this.#o;
    const moved = channelKey(move.channelId, move.topic);
    if (moved === move.from || askedAmong(dialogs.entries(), move.from, move.ids).length === 0) return;
    let done = () => {};
    const recorded = new Promise<void>((resolve) => {
      done = resolve;
    });
    // `done` also when the task is dropped (a stop): the new conversation is never held for good.
    queue.push(move.from, this.#moveTask, { move, done }, done);
    queue.push(moved, (control) => control.holdKey(recorded));
  }

  readonly #moveTask = (control: TaskControl, step: { move: Move; done: () => void }): unknown => {
    const { move, done } = step;
    const entries = askedAmong(this.#o.dialogs.entries(), move.from, move.ids);
    // A run of one of them under way (its answer came before the move): the move waits for it.
    const running = entries.find((entry) => entry.running);
    if (running !== undefined) {
      return whenSettled(running, control.signal).then((over) =>
        over ? this.#moveTask(control, step) : done(),
      );
    }
    const waiting = entries.filter((entry) => entry.waiting);
    if (waiting.length === 0) return done();
    control.holdKey(this.#record(waiting, move, control.signal).finally(done));
    return undefined;
  };

  /** Append the move to each of `entries`' logs, tried again while the store fails, until `signal` aborts. */
  async #record(entries: DialogEntry[], move: Move, signal: AbortSignal): Promise<void> {
    const { dialogs, log } = this.#o;
    const to = await this.#placeOf(move, signal);
    const one = async (entry: DialogEntry) => {
      try {
        await dialogs.retrying(signal, () => dialogs.move(entry, move.from, to));
        failpoint("move-logged");
        log.info({ dialog: entry.id, where: to.label }, "a dialog's topic moved: the dialog follows it");
      } catch (err) {
        dialogs.unmatch(entry);
        if (!(err instanceof DialogEnded || err instanceof LogMoved))
          log.warn(
            { err, dialog: entry.id },
            "a dialog's move was not recorded: its question is read back at the next new queue",
          );
      }
    };
    await Promise.all(entries.map(one));
  }

  /**
   * Where `move` went; a channel the bot knows no name of yet is named by one GET /streams. Moved
   * to another channel, the bot subscribes itself there (once per start): the answer typed there
   * then reaches it.
   */
  async #placeOf(move: Move, signal: AbortSignal): Promise<AskedIn> {
    const deps = this.#o.contexts.deps();
    let name = move.channel ?? deps.channelName(move.channelId);
    if (name === undefined) {
      const { streams } = await deps.api.channels.list({}, { signal }).catch(() => ({ streams: [] }));
      name = streams.find((c) => c.stream_id === move.channelId)?.name;
      if (name !== undefined) deps.services?.channels.learn(move.channelId, name);
    }
    if (name !== undefined && !move.from.startsWith(`channel:${move.channelId}:`))
      await deps.services?.channels
        .join(move.channelId, name, signal)
        .catch((err: unknown) =>
          this.#o.log.warn(
            { err, where: `#${name}` },
            "could not subscribe where a dialog moved: answers there miss the bot",
          ),
        );
    return placeOf(move, name ?? `channel ${move.channelId}`);
  }
}
