/**
 * `ctx.progress`: a message that shows long work as it happens. The handle keeps the whole text;
 * a pump brings the server's messages up to it one step at a time (an edit of the open message,
 * or a post when the text rolls over), at most one edit a second and fewer when the call budget
 * runs low (pacing.ts). Every step is an effect recorded with the state after it (shown.ts), so a
 * handler that runs again after a crash goes on from the last step made.
 */
import { sleep } from "../../api/sleep.ts";
import { BothostError } from "../../errors/bothost-error.ts";
import type { Clock } from "../../time/clock.ts";
import { splitContent } from "../limits/split-content.ts";
import type { OpenProgress } from "./open-progresses.ts";
import { editInterval, enlist, nextEditAt, stretchedInterval } from "./pacing.ts";
import { editableAt, planStep, type Step } from "./plan.ts";
import {
  EditRefused,
  isFinalRefusal,
  PastEditLimit,
  type ProgressDeps,
  type ServerSteps,
  stepFailedLine,
  withPosted,
} from "./server-steps.ts";
import { copyState, endsLate, heldLength, reopenedFor, type ShownState, withGone } from "./shown.ts";
import { edgesOf, fingerprint, stored, withNote } from "./text-parts.ts";
import type { ProgressResult, Settings } from "./types.ts";

export function progressError(message: string): BothostError<"INVALID_ARGUMENT"> {
  return new BothostError("INVALID_ARGUMENT", `ctx.progress: ${message}`);
}

export class Progress implements OpenProgress {
  readonly messageId: number;
  #text: string;
  /** Where in the text the open message's part starts (a re-run: where the earlier run's steps left it). */
  #from: number;
  #state: ShownState;
  /** When the last edit was made, by the budget's clock ({@link #clock}). */
  #lastEditAt = Number.NEGATIVE_INFINITY;
  #timer: ReturnType<Clock["setTimeout"]> | undefined;
  #pumping: Promise<void> | undefined;
  /** done() or fail() was called: the text no longer changes. */
  #finished = false;
  /** Its last steps, under way or made (`#ended`). */
  #finishing: Promise<ProgressResult> | undefined;
  #ended = false;
  /** Its handler's attempt failed: no more edits until abandon(). */
  #halted = false;
  #steps: ServerSteps;
  /** What cuts its calls and waits: the handler's signal, or abandon()'s. */
  #signal: AbortSignal;
  /** Messages the server refused to edit (past its edit time limit by its clock). */
  readonly #frozen = new Set<number>();
  /** The clock of the account's call budget: edits are paced, and wait, on it. */
  readonly #clock: Clock;
  /** Counted among the account's progresses under way (they share its budget). */
  readonly #enlisted: { end(): void };
  /** Ended by an earlier run: its `working` reaction was not put again (start-progress.ts). */
  readonly #startedOver: boolean;

  constructor(
    private readonly deps: ProgressDeps,
    steps: ServerSteps,
    state: ShownState,
    private readonly placeholder: string,
    private readonly settings: Settings,
    text = "",
  ) {
    this.#text = text;
    this.#state = state;
    this.#startedOver = state.over === true;
    this.#from = heldLength(state);
    this.#steps = steps;
    this.#signal = deps.signal;
    this.messageId = state.messages[0]!.id;
    // Edits are paced on the clock the account's budget counts calls by (pacing.ts).
    this.#clock = deps.api.budget.other.clock;
    this.#enlisted = enlist(deps.api.budget.other, this);
    deps.signal.addEventListener("abort", () => this.#stop(), { once: true });
  }

  get text(): string {
    return this.#text;
  }
  get edits(): number {
    return this.#state.edits;
  }

  update(text: string): void {
    this.#checkOpen("update");
    // A text that no longer begins with what the closed messages hold (so far) is shown whole.
    const held = Math.min(this.#from, this.#text.length);
    if (text.slice(0, held) !== this.#text.slice(0, held)) this.#from = 0;
    this.#text = text;
    this.#wake();
  }

  append(chunk: string): void {
    this.#checkOpen("append");
    this.#text += chunk;
    this.#wake();
  }

  async stream(chunks: AsyncIterable<string>): Promise<string> {
    for await (const chunk of chunks) this.append(chunk);
    return this.#text;
  }

  done(text?: string): Promise<ProgressResult> {
    this.#checkOpen("done");
    if (text !== undefined) this.update(text);
    return this.#finish(this.settings.ack.done);
  }

  fail(text: string): Promise<ProgressResult> {
    this.#checkOpen("fail");
    this.#text = withNote(this.#text, text);
    return this.#finish(this.settings.ack.failed);
  }

  halt(): void {
    this.#halted = true;
    this.#stop();
  }

  follow(earlier: OpenProgress): void {
    if (earlier instanceof Progress) this.#lastEditAt = Math.max(this.#lastEditAt, earlier.#lastEditAt);
  }

  async abandon(signal: AbortSignal, ended = false): Promise<void> {
    // A done() or fail() cut short (by the handler's timeout) is finished here.
    await this.#finishing?.catch(() => undefined);
    // Finished by an earlier run (recorded): its handler's later failure leaves it as it ended.
    if (this.#ended || this.#state.over) return;
    [this.#signal, this.#steps] = [signal, this.#steps.on(signal)];
    const { failedNote, endedNote } = this.settings;
    this.#text = withNote(this.#text, ended ? (endedNote ?? failedNote) : failedNote);
    await this.#finish(this.settings.ack.failed);
  }

  /** Refuses a change once finished, or once the handler's time is up (the bot ends it then). */
  #checkOpen(what: string): void {
    if (this.#finished) throw progressError(`${what}() after done() or fail(): the progress is finished.`);
    if (this.deps.signal.aborted) throw this.deps.signal.reason;
  }

  #stop(): void {
    this.#enlisted.end();
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Whether message `index` may still be edited: before the edit time limit, less a margin. */
  #editable(index: number, now: number): boolean {
    return editableAt(this.#state, index, now, this.#frozen, this.deps.server.editLimitSeconds);
  }

  /** The next step toward showing the text, or undefined when the messages show it. */
  #plan(now: number): Step | undefined {
    // Ended by an earlier run (recorded): shown as it ended until this run's done() or fail().
    if (this.#state.over && !this.#finished) return undefined;
    return planStep({
      state: this.#state,
      tail: this.#text.slice(this.#from),
      maxMessageLength: this.deps.server.maxMessageLength,
      finished: this.#finished,
      editable: (index) => this.#editable(index, now),
    });
  }

  /** Make `step`; the state after it (made now, or found recorded by an earlier run). */
  async #make(step: Step): Promise<boolean> {
    const base = this.#state;
    const now = this.deps.clock.now();
    if (step.kind === "close") {
      const next = copyState(base);
      const m = next.messages[step.index]!;
      m.closed = true;
      // One that shows another text than the start of this one (replaced by update() since, as
      // when a dialog's answer came past the edit time limit) holds none of it: all goes on anew.
      const held = step.shows ?? this.#text.slice(this.#from, this.#from + m.length);
      const holds = fingerprint(stored(held)) === m.content;
      [m.length, m.edges] = holds ? [held.length, edgesOf(held)] : [0, undefined];
      this.#adopt(next);
      return false;
    }
    if (step.kind === "post") {
      const content = stored(step.part);
      const at = (id: number) => withPosted(base, id, step.part, step.part.length, now);
      const posted = async () => at(await this.#steps.post(content, base.messages.at(-1)?.id));
      const find = async () => {
        const found = await this.#steps.find(content, base.messages.at(-1)?.id);
        return found && this.#shows(at(found.id), found.content);
      };
      const { state, made } = await this.#steps.once(posted, find);
      this.#adopt(state);
      return made;
    }
    const content = stored(step.part);
    const edited = async () => {
      const refused = await this.#edit(base, step.index, content);
      if (refused) return refused;
      const next = copyState(base);
      const m = next.messages[step.index]!;
      [m.content, m.length, m.edges] = [fingerprint(content), step.part.length, edgesOf(step.part)];
      // A part cut short of the text closes its message: the rest goes on in a new one.
      if (step.closes) m.closed = true;
      next.edits++;
      return next;
    };
    const { state, made } = await this.#steps.once(edited);
    this.#adopt(state);
    return made;
  }

  /** Edit message `index` of `base`; the state with it gone if the server refuses for good. */
  async #edit(base: ShownState, index: number, content: string): Promise<ShownState | undefined> {
    try {
      await this.#steps.edit(base.messages[index]!.id, content);
      return undefined;
    } catch (err) {
      if (!(err instanceof EditRefused)) throw err;
      this.deps.log.warn(
        { err: err.cause, messageId: err.messageId },
        "progress: the server refused to edit the message (deleted?): it is no longer edited",
      );
      return withGone(base, index);
    }
  }

  /** The newest message of `state`, found posted by an earlier run, shows `content` (maybe more text). */
  #shows(state: ShownState, content: string): ShownState {
    const m = state.messages.at(-1)!;
    [m.content, m.length] = [fingerprint(content), Math.max(m.length, content.length)];
    return state;
  }

  /** Take `state` as what the server shows; the open part starts after what closed messages hold. */
  #adopt(state: ShownState): void {
    const grew = heldLength(state) - heldLength(this.#state);
    this.#state = state;
    this.#from = Math.max(0, Math.min(this.#text.length, this.#from + grew));
  }

  /** Steps until one is made (or none is left): found-recorded steps and closes cost no call. */
  async #stepOnce(): Promise<boolean> {
    for (;;) {
      const step = this.#plan(this.deps.clock.now());
      if (!step) return false;
      try {
        if (await this.#make(step)) {
          this.#lastEditAt = this.#clock.now();
          return true;
        }
      } catch (err) {
        if (!(err instanceof PastEditLimit)) {
          // A failed call counts as one: the next try waits its turn as the next edit would.
          this.#lastEditAt = this.#clock.now();
          throw err;
        }
        this.#frozen.add(err.messageId);
      }
    }
  }

  /** When the next edit may start: after the interval (stretched when the budget is low), when the budget allows. */
  #dueAt(): number {
    const bucket = this.deps.api.budget.other;
    // A finishing progress no longer shares: its last edits go as soon as the budget allows.
    const pace = this.#finished ? stretchedInterval : editInterval;
    return nextEditAt(bucket, this.#lastEditAt, pace(bucket, this.settings.interval));
  }

  /** Arm the pump for the next due time, unless it is armed or running. */
  #wake(): void {
    if (this.#timer !== undefined || this.#pumping || this.#finished || this.#halted) return;
    if (this.#signal.aborted) return;
    this.#timer = this.#clock.setTimeout(
      () => {
        this.#timer = undefined;
        this.#pumping = this.#pump();
      },
      Math.max(0, this.#dueAt() - this.#clock.now()),
    );
  }

  async #pump(): Promise<void> {
    try {
      await this.#stepOnce();
    } catch (err) {
      this.deps.log.warn({ err, messageId: this.messageId }, stepFailedLine(err, "the next one retries"));
    } finally {
      this.#pumping = undefined;
    }
    if (this.#plan(this.deps.clock.now())) this.#wake();
  }

  #finish(ack: string | undefined): Promise<ProgressResult> {
    this.#finished = true;
    this.#finishing = this.#end(ack);
    return this.#finishing;
  }

  async #end(ack: string | undefined): Promise<ProgressResult> {
    this.#stop();
    await this.#pumping;
    const ended = this.#state.over ? this.#state : undefined;
    if (this.#text.trim() === "") this.#text = this.placeholder;
    const pieces = splitContent(this.#text, this.deps.server.maxMessageLength);
    this.#state = reopenedFor(this.#state, pieces) ?? this.#state;
    const late = endsLate(this.#state, this.deps.clock.now(), this.settings.finalAfterMs);
    // A deleted progress message ends with the result posted anew, as late work does.
    const gone = this.#state.messages.at(-1)!.gone;
    if (late || gone || this.#state.finalFrom !== undefined) await this.#postFinal(pieces);
    else await this.#catchUp();
    // Shown as an earlier run ended it (a run again after a crash): its reactions are too.
    if (this.#state !== ended) {
      if (!this.#startedOver) await this.#steps.ack(this.settings.ack.working, true);
      await this.#steps.ack(ack);
      await this.#markOver();
    }
    this.#ended = true;
    const { messages, edits, posts, finalFrom = 0 } = this.#state;
    return { messageIds: messages.slice(finalFrom).map((m) => m.id), text: this.#text, edits, posts };
  }

  /** Recorded as finished, its reactions made: an operator's end of its dialog leaves it so. */
  async #markOver(): Promise<void> {
    if (this.#state.over) return;
    const over: ShownState = { ...copyState(this.#state), over: true };
    try {
      this.#state = (await this.#steps.once(async () => over)).state;
    } catch (err) {
      this.deps.log.warn({ err, messageId: this.messageId }, "progress: could not record that it finished");
    }
  }

  /** Edit (and roll over) until the messages show the whole text, each step when it is due. */
  async #catchUp(): Promise<void> {
    for (;;) {
      if (!this.#plan(this.deps.clock.now())) return;
      const wait = this.#dueAt() - this.#clock.now();
      if (wait > 0) await sleep(this.#clock, wait, this.#signal);
      try {
        await this.#stepOnce();
      } catch (err) {
        // Aborted, or refused as the same call would be again (a post where the bot may not post).
        if (this.#signal.aborted || isFinalRefusal(err)) throw err;
        this.deps.log.warn({ err, messageId: this.messageId }, stepFailedLine(err));
      }
    }
  }

  /** Post the final text (`pieces`, its messages) as new messages, then point the earlier ones at it. */
  async #postFinal(pieces: readonly string[]): Promise<void> {
    for (;;) {
      // Until the first final post, the final text starts after the messages there are.
      const start = this.#state.finalFrom ?? this.#state.messages.length;
      const i = this.#state.messages.length - start;
      const piece = pieces[i];
      if (piece === undefined) break;
      const base = this.#state;
      const at = (id: number) => {
        const next = withPosted(base, id, piece, piece.length, this.deps.clock.now());
        Object.assign(next, { finalFrom: start }, pieces.length > 1 ? { finalText: this.#text } : {});
        for (const m of next.messages.slice(0, start)) m.closed = true;
        return next;
      };
      const find = async () => {
        const found = await this.#steps.find(stored(piece), base.messages.at(-1)?.id);
        return found && this.#shows(at(found.id), found.content);
      };
      const posted = async () => at(await this.#steps.post(piece, base.messages.at(-1)?.id));
      const { state } = await this.#steps.once(posted, find);
      this.#state = state;
    }
    const note = fingerprint(stored(this.settings.movedNote));
    const start = this.#state.finalFrom ?? 0;
    for (let index = 0; index < start; index++) {
      const m = this.#state.messages[index]!;
      if (m.content === note || !this.#editable(index, this.deps.clock.now())) continue;
      const base = this.#state;
      const moved = async () => {
        const refused = await this.#edit(base, index, this.settings.movedNote);
        if (refused) return refused;
        const next = copyState(base);
        next.messages[index]!.content = note;
        next.edits++;
        return next;
      };
      try {
        this.#state = (await this.#steps.once(moved)).state;
      } catch (err) {
        if (!(err instanceof PastEditLimit)) throw err;
      }
    }
  }
}
