/**
 * The public shape of `ctx.progress`: one message that shows long work as it happens, edited as
 * the work goes on, then finished with the result.
 */

/** Reactions on the asker's message: one while the work runs, another when it ends. */
export interface ProgressAck {
  /** Added when the progress starts, taken off when it ends (e.g. `"eyes"`). */
  working?: string;
  /** Added by `done()` (e.g. `"check"`). */
  done?: string;
  /** Added by `fail()` (e.g. `"cross_mark"`). */
  failed?: string;
}

/** What `ctx.progress(text, options)` takes besides the first text. */
export interface ProgressOptions {
  /** Reactions on the event's message while working and when finished. */
  ack?: ProgressAck;
  /**
   * Work that took longer than this (ms, default 30,000) ends with its result posted as a new
   * message, so that people are notified (the server notifies on a send, not on an edit); the
   * message that showed the progress is then edited to {@link ProgressOptions.movedNote}.
   */
  finalAfterMs?: number;
  /** The shortest time between two edits of one message (ms, default 1,000; never less). */
  minEditIntervalMs?: number;
  /** What a progress message shows once its result was posted anew. Default `"(finished: see below)"`. */
  movedNote?: string;
  /**
   * What is shown below the text when the handler failed with the progress open (it threw, or ran
   * past `handler_timeout`, on every attempt). Default `"(failed: the work stopped before it finished)"`.
   */
  failedNote?: string;
  /**
   * What is shown below the text, in place of `failedNote`, when the progress's dialog is ended
   * with no handler left to finish it while it is open: by an operator (`bothost dialogs end`), or
   * stopped because the bot's code changed under it. The work it showed may have finished or not
   * (a call under way then is not waited for): say so. Default: `failedNote`.
   */
  endedNote?: string;
}

/** How a progress ended, and what it took. */
export interface ProgressResult {
  /** The messages that hold the final text, in order. */
  messageIds: number[];
  /** The final text (all of it, across those messages). */
  text: string;
  /** Edits made to the progress messages. */
  edits: number;
  /** Messages posted (the first included). */
  posts: number;
}

/**
 * A message showing work in progress. Calls that change the text return at once: the message is
 * edited at most once a second (less often when the bot's call budget runs low), with the newest
 * text. Text over the server's message length rolls over into a new message; a message past the
 * organization's edit time limit is left as it is and the text goes on in a new one. A message
 * deleted meanwhile is no longer edited: the final text is posted anew. A handler that fails
 * with its progress open ends it as failed (`failedNote`, the `failed` reaction).
 */
export interface ProgressHandle {
  /** The first message's id. */
  readonly messageId: number;
  /** The whole text so far. */
  readonly text: string;
  /** Edits made so far. */
  readonly edits: number;
  /** Replace the whole text. */
  update(text: string): void;
  /** Add to the end of the text (a streamed chunk). */
  append(chunk: string): void;
  /** Append every chunk of `chunks` as it comes; resolves with the whole text when it ends. */
  stream(chunks: AsyncIterable<string>): Promise<string>;
  /**
   * Finish: the final text (`text`, else the text so far) shown at once, or posted as a new
   * message when the work took longer than `finalAfterMs`; the `done` reaction replaces `working`.
   */
  done(text?: string): Promise<ProgressResult>;
  /** Finish as failed: `text` shown below what was streamed so far; the `failed` reaction replaces `working`. */
  fail(text: string): Promise<ProgressResult>;
}

/** A progress's options, checked and with their defaults. */
export interface Settings {
  finalAfterMs: number;
  interval: number;
  ack: NonNullable<ProgressOptions["ack"]>;
  movedNote: string;
  failedNote: string;
  endedNote?: string;
}
