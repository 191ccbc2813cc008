/**
 * The calls a progress makes (post a message, edit one, react to the asker's), and how each is
 * made once: as an effect of the handler's run whose result is the progress's state after it.
 */
import type { Logger } from "pino";
import type { Client } from "../../api/create-client.ts";
import { isApiError } from "../../api/errors.ts";
import { messagePages } from "../../api/message-pages.ts";
import type { SendMessageParams } from "../../api/resources/messages.ts";
import type { ServerInfo } from "../../api/server-info.ts";
import { StateError } from "../../state/state-error.ts";
import type { JsonValue } from "../../state/state-store.ts";
import type { Clock } from "../../time/clock.ts";
import type { EffectRun } from "../effect-records.ts";
import { failpoint } from "../failpoints.ts";
import { react } from "../react.ts";
import { findSent } from "../verify-send.ts";
import { withinReserve } from "./pacing.ts";
import { copyState, fromRecord, type ShownState, toRecord } from "./shown.ts";
import { edgesOf, fingerprint, stored } from "./text-parts.ts";

/** Where a progress posts: a conversation, without the content. */
export type ProgressTarget = Omit<SendMessageParams, "content">;

/** What a progress is made with (`ctx.progress` fills it from the event's context). */
export interface ProgressDeps {
  api: Client;
  clock: Pick<Clock, "now"> & Partial<Clock>;
  /** The run's effect records; without them (no event) each step is simply made. */
  run: EffectRun | undefined;
  /** A read-back after a lost answer looks for messages newer than this id (the event's message). */
  after: number | undefined;
  /**
   * What the first post's read-back looks past, asked when it looks (inside its effect): for a
   * progress a dialog's replay opens anew, its latest answer, not the event's message. Else `after`.
   */
  newer?: () => { after: number | undefined; since?: number | undefined };
  log: Logger;
  server: ServerInfo;
  signal: AbortSignal;
  selfId: number;
  /** The asker's message, for the `ack` reactions. */
  askedId: number | undefined;
  target: ProgressTarget;
}

/** A message the server refused to edit because it is past the organization's edit time limit. */
export class PastEditLimit extends Error {
  constructor(readonly messageId: number) {
    super(`message ${messageId} is past the organization's edit time limit`);
  }
}

/**
 * A message the server refused to edit for good: deleted ("Invalid message(s)", as for a message
 * the bot can no longer read), or not the bot's to edit. Any 400 but the edit time limit's: the
 * same edit would be refused again.
 */
export class EditRefused extends Error {
  constructor(
    readonly messageId: number,
    cause: unknown,
  ) {
    super(`the server refused to edit message ${messageId}`, { cause });
  }
}

/** The server's answer to an edit past the limit ("The time limit for editing this message has past/passed"). */
const isPastLimit = (err: unknown) => isApiError(err) && /time limit for editing/i.test(err.message);
/** The server's answer to an edit it will never make (a 429 is 429, a 5xx may pass). */
const isRefused = (err: unknown) => isApiError(err) && err.status === 400;
/** A call the server refused and would refuse again (any 4xx but a 429): not to be retried. */
export const isFinalRefusal = (err: unknown) =>
  isApiError(err) && err.status >= 400 && err.status < 500 && err.status !== 429;

/** The line of a step that failed and is tried again (`next`): on the chat server, or on the state store (its record). */
export const stepFailedLine = (err: unknown, next = "retrying") =>
  `progress: ${err instanceof StateError ? "a step's record could not be written (the state store failed it)" : "an edit failed"}; ${next}`;

/** How long a message's place is taken as known: a move within it is not looked for. */
const PLACE_FRESH_MS = 2_000;

export class ServerSteps {
  /**
   * A post failed with its outcome unknown (a server error or a lost connection after the request
   * left, or its record's write failed after it was made): the next post looks for it first.
   */
  #doubt = false;
  /** Where the progress posts: its conversation, followed where its messages were moved. */
  #where: ProgressTarget;
  /** The message whose place `#where` was last read from (or that was posted there), and when. */
  #placeOf: number | undefined;
  #placeAt = 0;

  constructor(private readonly deps: ProgressDeps) {
    this.#where = deps.target;
  }

  /** Make `call` when the account's budget has calls to spare beyond the reserve. */
  #spare<T>(call: () => Promise<T>): Promise<T> {
    const { api, signal } = this.deps;
    return withinReserve(api.budget.other, call, signal);
  }

  /**
   * Post `content` as a new message of the conversation, after the progress's message `previous`
   * (if any): where that one is now. Its id.
   */
  async post(content: string, previous?: number): Promise<number> {
    await this.#follow(previous);
    const { api, signal } = this.deps;
    const params = { ...this.#where, content, read_by_sender: true } as SendMessageParams;
    const { id } = await this.#spare(() => api.messages.send(params, { signal }));
    failpoint("progress-posted");
    // Where it was just posted: the part posted right after it (a long final text) reads nothing.
    [this.#placeOf, this.#placeAt] = [id, this.deps.clock.now()];
    return id;
  }

  /**
   * The message a send whose answer was lost posted, if it did: the bot's first in the
   * conversation after message `since` (the progress's last) and past `past` holding `content`,
   * or a start or an extension of it (an earlier run posted the same place in the text when it
   * was shorter).
   */
  async find(
    content: string,
    since: number | undefined,
    past: { after: number | undefined; since?: number | undefined } = { after: this.deps.after },
  ): Promise<{ id: number; content: string } | undefined> {
    await this.#follow(since);
    const { api, selfId, signal } = this.deps;
    const newer = { ...past, after: Math.max(past.after ?? 0, since ?? 0) };
    const where = { ...this.#where, content: "" } as SendMessageParams;
    const same = (m: string) => m !== "" && (m.startsWith(content) || content.startsWith(m));
    return this.#spare(() => findSent(api, selfId, where, newer, signal, same));
  }

  /**
   * Follow the progress's messages where they were moved (a topic renamed or resolved, moved to
   * another channel): read where message `id`, its latest, is now (one call, before the post
   * after it), unless its place was learnt within {@link PLACE_FRESH_MS}. Direct messages do not move.
   */
  async #follow(id: number | undefined): Promise<void> {
    const where = this.#where;
    const fresh = id === this.#placeOf && this.deps.clock.now() - this.#placeAt < PLACE_FRESH_MS;
    if (id === undefined || fresh || !(where.type === "channel" || where.type === "stream")) return;
    const { api, server, signal, log } = this.deps;
    try {
      const [page] = messagePages({ client: api, featureLevel: server.featureLevel, signal }, [id]);
      const now = (await this.#spare(() => page!)).find((m) => m.id === id);
      [this.#placeOf, this.#placeAt] = [id, this.deps.clock.now()];
      const moved = now?.stream_id === undefined ? undefined : { to: now.stream_id, topic: now.subject };
      if (moved) this.#where = { ...where, ...moved };
    } catch (err) {
      if (signal.aborted) throw err;
      log.warn(
        { err, messageId: id },
        "progress: could not read where its message is now; posting where it was",
      );
    }
  }

  /** The same steps, their calls and waits cut by `signal` instead. */
  on(signal: AbortSignal): ServerSteps {
    const steps = new ServerSteps({ ...this.deps, signal });
    [steps.#doubt, steps.#where, steps.#placeOf, steps.#placeAt] = [
      this.#doubt,
      this.#where,
      this.#placeOf,
      this.#placeAt,
    ];
    return steps;
  }

  /**
   * Set message `id`'s content; throws {@link PastEditLimit} when the server says it is too old,
   * {@link EditRefused} when it refuses for another reason (the message was deleted).
   */
  async edit(id: number, content: string): Promise<void> {
    try {
      const { api, signal } = this.deps;
      await this.#spare(() => api.messages.update(id, { content }, { signal }));
    } catch (err) {
      if (isPastLimit(err)) throw new PastEditLimit(id);
      if (isRefused(err)) throw new EditRefused(id, err);
      throw err;
    }
  }

  /**
   * React to the asker's message (or take a reaction off); a failure is logged, not thrown. A
   * dialog ctx.startDialog began has none (its first message, made up, has a negative id).
   */
  async ack(emoji: string | undefined, remove = false): Promise<void> {
    const { api, askedId, signal, log } = this.deps;
    if (emoji === undefined || askedId === undefined || askedId <= 0) return;
    try {
      await react(api, emoji, { eventMessageId: askedId, signal, remove });
    } catch (err) {
      log.warn({ err, emoji, messageId: askedId }, "progress: the acknowledgement reaction failed");
    }
  }

  /**
   * On a re-run (`rerun`: its first post was found made), the state after the last step an
   * earlier run made, each taken as made, so that the steps this run makes are numbered after
   * them. The open message is read back (one call): an edit whose record was lost with the
   * earlier run shows more than the records say, and this run shows no less. `state` as it is on
   * a first run, with no read.
   */
  async lastMade(state: ShownState, rerun: boolean): Promise<ShownState> {
    const { run, api, server, signal, log } = this.deps;
    if (!rerun || run === undefined) return state;
    state = await this.replayed(state);
    const open = state.messages.at(-1)!;
    if (open.closed) return state;
    try {
      const [page] = messagePages({ client: api, featureLevel: server.featureLevel, signal }, [open.id]);
      const content = (await this.#spare(() => page!)).find((m) => m.id === open.id)?.content;
      if (content === undefined || fingerprint(content) === open.content) return state;
      const next = copyState(state);
      const m = next.messages.at(-1)!;
      // Read back, its part is what it shows: what the server dropped of it is not known.
      [m.content, m.length, m.edges] = [fingerprint(content), content.length, undefined];
      return next;
    } catch (err) {
      log.warn({ err, messageId: open.id }, "progress: could not read back what the message shows");
      return state;
    }
  }

  /**
   * The state after the last step an earlier run made, as its records say (no call). A post it
   * began and never recorded (killed before its answer was read or its record written) may have
   * been made: the state says so (`doubt`), and this run's next post looks for it first, also
   * when an edit takes that post's number before it (a re-run's text shown from its start).
   */
  async replayed(state: ShownState): Promise<ShownState> {
    const run = this.deps.run;
    if (run === undefined) return state;
    for (let r = await run.replayed("progress"); r !== undefined; r = await run.replayed("progress")) {
      const next = fromRecord(r);
      // The final text is in the first final post's record only: the later ones go on with it.
      const finalText = next?.finalText ?? state.finalText;
      if (next) state = finalText === undefined ? next : { ...next, finalText };
    }
    if (state.doubt || run.leftBegun) {
      this.#doubt = true;
      state = { ...state, doubt: true };
    }
    return state;
  }

  /**
   * What message `id` shows, as its raw Markdown (one GET /messages/{id}); undefined when the
   * server refuses it for good (deleted, or out of the bot's reach). Any other failure throws.
   */
  async shows(id: number): Promise<string | undefined> {
    const { api, signal } = this.deps;
    try {
      const { message, raw_content } = await this.#spare(() => api.messages.byId(id, { signal }));
      return message?.content ?? raw_content;
    } catch (err) {
      if (isFinalRefusal(err) && !signal.aborted) return undefined;
      throw err;
    }
  }

  /**
   * Make one step once: `act` changes the server and returns the state after it. On a re-run that
   * finds the step made, the recorded state comes back instead (`made: false`) and nothing is
   * called. `find`: for a post, looks for the message when an earlier run's answer was lost, or
   * when this run's last post failed with its outcome unknown (the post found is taken as made).
   * `ends`: kept in the step's record beside the state (the first post's: see left-open.ts).
   */
  async once(
    act: () => Promise<ShownState>,
    find?: () => Promise<ShownState | undefined>,
    ends?: JsonValue,
  ): Promise<{ state: ShownState; made: boolean }> {
    if (find === undefined) return this.#once(act);
    if (this.#doubt) {
      const found = await find();
      this.#doubt = false;
      if (found) act = async () => found;
      // Looked for just now: a pending record at this step's number is answered without a call.
      find = async () => found;
    }
    try {
      return await this.#once(act, find, ends);
    } catch (err) {
      // Refused before acting (a 4xx): nothing was posted. Anything else may have posted it.
      if (!isFinalRefusal(err)) this.#doubt = true;
      throw err;
    }
  }

  async #once(
    act: () => Promise<ShownState>,
    find?: () => Promise<ShownState | undefined>,
    ends?: JsonValue,
  ): Promise<{ state: ShownState; made: boolean }> {
    const run = this.deps.run;
    if (!run) return { state: await act(), made: true };
    let made = false;
    const record = (state: ShownState): JsonValue =>
      ends === undefined ? toRecord(state) : { ...(toRecord(state) as object), s: ends };
    const result = await run.once("progress", {
      act: async () => {
        made = true;
        return record(await act());
      },
      ...(find
        ? {
            verify: async () => {
              const state = await find();
              if (state) made = true;
              return state && record(state);
            },
          }
        : {}),
    });
    const state = fromRecord(result);
    if (!state) throw new Error("progress: a recorded step is not a progress state");
    return { state, made };
  }
}

/**
 * The state after posting `content` (holding `length` characters of the text) as message `id`;
 * when it holds all of `content` (its part), what the server drops of it is kept (its edges).
 */
export function withPosted(
  state: ShownState,
  id: number,
  content: string,
  length: number,
  postedAt: number,
): ShownState {
  const { doubt: _looked, ...rest } = copyState(state);
  const next: ShownState = rest;
  const edges = length === content.length ? edgesOf(content) : undefined;
  next.messages.push({
    id,
    postedAt,
    length,
    content: fingerprint(stored(content)),
    closed: false,
    ...(edges && (edges.lead > 0 || edges.trail !== "") ? { edges } : {}),
  });
  next.posts++;
  return next;
}
