/**
 * `ctx.typing`. `who` and `isTyping` only know what `typing` events told the bot's one
 * TypingTracker, so its queue must receive them (`bot.track("typing")`); channel typing
 * reaches the bot only in channels it is in with at most 100 subscribers (see
 * docs/internals/server-behaviour.md#event-shapes).
 */
import { callLaneOf, laneOf } from "../../api/budget-line.ts";
import type { Client } from "../../api/create-client.ts";
import { BothostError } from "../../errors/bothost-error.ts";
import { type Clock, realClock, type TimerHandle } from "../../time/clock.ts";

/**
 * The conversation a bot types in or asks about: a channel (id or name) and topic, or the other
 * users of a direct conversation (the bot itself is implied).
 */
export type TypingTarget = { channel: number | string; topic: string } | { users: readonly number[] };

/**
 * `ctx.typing`: show that the bot is typing while work runs, and see who else is.
 *
 * @example
 * ```ts
 * const answer = await ctx.typing.during({ users: [ctx.event.message.sender_id] }, (signal) => lookUp(question, signal));
 * const typists = await ctx.typing.who({ channel: "support", topic: "printer" }); // [12, 15]
 * ```
 */
export interface TypingHelper {
  /**
   * Runs `fn` while the bot shows as typing in `target`: `start` at once, again every
   * `server_typing_started_wait_period_milliseconds`, `stop` when `fn` settles (or is aborted).
   * Typing failures are logged at debug level and never fail `fn`.
   */
  during<T>(target: TypingTarget, fn: (signal: AbortSignal) => Promise<T>): Promise<T>;
  /** User ids shown as typing in `target`, in the order they started (the bot excluded). */
  who(target: TypingTarget): Promise<number[]>;
  /** Whether `userId` is shown as typing in `target`, or anywhere when none is given. */
  isTyping(userId: number, target?: TypingTarget): Promise<boolean>;
}

/** Checks the shape, so a wrong argument fails with a message instead of a 400. */
export function checkTypingTarget(target: TypingTarget, where: string): void {
  if (typeof target === "object" && target !== null) {
    if ("users" in target) {
      const ok = Array.isArray(target.users) && target.users.length > 0;
      if (ok && target.users.every((id) => Number.isInteger(id) && id > 0)) return;
    } else if ("channel" in target && typeof target.topic === "string") return;
  }
  throw new BothostError(
    "INVALID_ARGUMENT",
    `${where}: give { channel: <id or name>, topic: "<topic>" } or { users: [<user id>, …] }, ` +
      `got ${JSON.stringify(target)}.`,
  );
}

export type TypingOp = "start" | "stop";

/** Sends one typing notification for a fixed conversation (the client's `POST /typing`). */
export type SetTyping = (op: TypingOp, signal?: AbortSignal) => Promise<void>;

export interface TypingDuringOptions {
  /** How often to repeat `start`: `server_typing_started_wait_period_milliseconds` (default 30000; 10000 before FL 204). */
  startedWaitMs?: number;
  clock?: Clock;
  /**
   * Cancels the work: `fn` sees it through its own signal, and `stop` is still sent. Its call lane
   * is the lane of the signal `fn` gets.
   */
  signal?: AbortSignal;
  /** A typing request failed (ignored otherwise; it never fails the work). */
  onError?: (error: unknown, op: TypingOp) => void;
}

/**
 * Runs `fn` while showing the bot as typing, and returns (or throws) what `fn` does. Rules (seed,
 * "Sending side rules"): send `start` when the work begins; repeat it every
 * `server_typing_started_wait_period_milliseconds` while it runs; send `stop` when it ends, throws
 * or is cancelled, but only if a `start` was sent. A typing request that fails never fails the work.
 */
export async function typingDuring<T>(
  setTyping: SetTyping,
  fn: (signal: AbortSignal) => Promise<T>,
  options: TypingDuringOptions = {},
): Promise<T> {
  const { clock = realClock, startedWaitMs = 30_000, signal: outer, onError } = options;
  outer?.throwIfAborted();
  // Aborted when the work ends (cancelling a start still in flight) or when the caller cancels.
  const controller = new AbortController();
  // The calls `fn` makes with its signal wait for the budget in the caller's lane (a replay's: background).
  if (outer !== undefined) callLaneOf(controller.signal, laneOf(undefined, outer));
  const forwardAbort = () => controller.abort(outer?.reason);
  outer?.addEventListener("abort", forwardAbort, { once: true });

  const send = async (op: TypingOp, signal?: AbortSignal) => {
    try {
      await setTyping(op, signal);
    } catch (error) {
      try {
        onError?.(error, op);
      } catch {
        // The error hook is for reporting only; nothing it does may fail the work.
      }
    }
  };

  let inFlight: Promise<void> | undefined;
  let startSent = false;
  let timer: TimerHandle | undefined;
  const sendStart = () => {
    if (inFlight !== undefined) return; // the previous start is still on its way; this one adds nothing
    startSent = true;
    inFlight = send("start", controller.signal).finally(() => {
      inFlight = undefined;
    });
  };
  const repeat = () => {
    timer = clock.setTimeout(() => {
      sendStart();
      repeat();
    }, startedWaitMs);
  };

  sendStart();
  repeat();
  try {
    return await fn(controller.signal);
  } finally {
    if (timer !== undefined) clock.clearTimeout(timer);
    outer?.removeEventListener("abort", forwardAbort);
    controller.abort(new Error("The work is done; typing is no longer needed."));
    // Let an aborted start settle first, so the server cannot see our stop before it.
    await inFlight;
    if (startSent) await send("stop");
  }
}

/**
 * Channel name → id (typing needs the id). Names seen in message events are known at once;
 * others cost one GET /get_stream_id, then cached.
 */
export class ChannelIds {
  readonly #byName = new Map<string, number>();
  readonly #byId = new Map<number, string>();
  /** Channels the bot subscribed itself to (or found itself in) since its start. */
  readonly #joined = new Set<number>();
  /** Names renamed away while the bot runs (lower case): the channel's id and its new name. */
  readonly #renamed = new Map<string, { id: number; to: string }>();
  /** Told of each rename a `stream` event brings: the channel's id, its old name and its new one. */
  onRenamed: ((id: number, from: string, to: string) => void) | undefined;

  constructor(private readonly channels: Client["channels"]) {}

  /**
   * Remember a pairing seen in an event (every message event: known pairs cost one lookup). A new
   * name for a known id (a rename) drops the old name's entry: that name no longer names it.
   */
  learn(id: number, name: string): void {
    const before = this.#byId.get(id);
    if (before === name) return;
    if (before !== undefined && this.#byName.get(before.toLowerCase()) === id)
      this.#byName.delete(before.toLowerCase());
    this.#byId.set(id, name);
    this.#byName.set(name.toLowerCase(), id);
  }

  /**
   * A `stream` event: a rename (`op: "update"`, `property: "name"`: the old name in `name`, the
   * new one in `value`) drops the old name, which then resolves through the server again (an
   * error for a name nothing has any more), and maps the new one; a deletion drops the channels.
   */
  apply(event: {
    op?: unknown;
    stream_id?: unknown;
    name?: unknown;
    property?: unknown;
    value?: unknown;
    streams?: unknown;
  }): void {
    if (event.op === "update" && event.property === "name") {
      const { stream_id: id, name: old, value: name } = event;
      if (typeof id !== "number" || typeof name !== "string") return;
      if (typeof old === "string" && this.#byName.get(old.toLowerCase()) === id)
        this.#byName.delete(old.toLowerCase());
      this.learn(id, name);
      this.#renamed.delete(name.toLowerCase());
      if (typeof old !== "string") return;
      this.#renamed.set(old.toLowerCase(), { id, to: name });
      this.onRenamed?.(id, old, name);
    } else if (event.op === "delete" && Array.isArray(event.streams)) {
      for (const s of event.streams as { stream_id?: unknown }[]) {
        const name = typeof s?.stream_id === "number" ? this.#byId.get(s.stream_id) : undefined;
        if (name === undefined) continue;
        this.#byId.delete(s.stream_id as number);
        if (this.#byName.get(name.toLowerCase()) === s.stream_id) this.#byName.delete(name.toLowerCase());
      }
    }
  }

  /** The channel `name` named until a rename while the bot runs: its id and its new name. */
  renamedFrom(name: string): { id: number; to: string } | undefined {
    return this.#renamed.get(name.toLowerCase());
  }

  /** The name last seen for a channel id, if any. */
  nameOf(id: number): string | undefined {
    return this.#byId.get(id);
  }

  /**
   * Subscribe the bot to channel `name`, known to exist as `id` (the call would create a missing
   * one), once per start: the messages sent there reach its event queue from then on.
   */
  async join(id: number, name: string, signal?: AbortSignal): Promise<void> {
    if (this.#joined.has(id)) return;
    await this.channels.subscribe({ subscriptions: [{ name }] }, signal ? { signal } : {});
    this.#joined.add(id);
  }

  async resolve(channel: number | string, signal?: AbortSignal): Promise<number> {
    if (typeof channel === "number") {
      if (Number.isInteger(channel) && channel > 0) return channel;
      throw new BothostError("INVALID_ARGUMENT", `A channel id must be a positive integer, got ${channel}.`);
    }
    if (typeof channel !== "string" || channel.trim() === "") {
      throw new BothostError("INVALID_ARGUMENT", "A channel must be given by id or by a non-empty name.");
    }
    const known = this.#byName.get(channel.toLowerCase());
    if (known !== undefined) return known;
    const { stream_id } = await this.channels.id(channel, signal ? { signal } : {});
    this.learn(stream_id, channel);
    return stream_id;
  }
}
