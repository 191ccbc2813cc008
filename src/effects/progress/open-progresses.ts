/**
 * The progresses an event's handler opened (`ctx.progress`), across its attempts. When an
 * attempt fails, its progresses make no more edits; a retry that opens the same progress again
 * (its first message found recorded) takes the earlier handle's place. When the failure is final
 * (every attempt failed, or the handler threw `NoRetry`), each progress still open ends as failed:
 * its text with the `failedNote` below, the `failed` reaction in place of `working`.
 */
import type { Logger } from "pino";
import type { ProgressHandle } from "./types.ts";

/** A progress as the pipeline ends it. */
export interface OpenProgress extends ProgressHandle {
  /** Its handler's attempt failed: no more edits from this handle. */
  halt(): void;
  /** It goes on from `earlier`, the same progress in an earlier attempt: its next edit waits its turn after theirs. */
  follow(earlier: OpenProgress): void;
  /** End it as failed (unless it ended), its calls cut by `signal`; `ended`: its dialog's end, not its handler's failure. */
  abandon(signal: AbortSignal, ended?: boolean): Promise<void>;
}

export class OpenProgresses {
  readonly #byMessage = new Map<number, OpenProgress>();

  add(progress: OpenProgress): void {
    const earlier = this.#byMessage.get(progress.messageId);
    if (earlier) progress.follow(earlier);
    this.#byMessage.set(progress.messageId, progress);
  }

  halt(): void {
    for (const progress of this.#byMessage.values()) progress.halt();
  }

  /** End every progress still open as failed (`ended`: by its dialog's end); one that cannot be is logged. */
  async abandon(signal: AbortSignal, log: Logger, ended = false): Promise<void> {
    for (const progress of this.#byMessage.values()) {
      try {
        await progress.abandon(signal, ended);
      } catch (err) {
        log.warn({ err, messageId: progress.messageId }, "progress: could not mark it failed");
      }
    }
  }
}
