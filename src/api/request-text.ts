/**
 * One HTTP exchange through an undici dispatcher, the answer's body read whole as text: how every
 * call of the client goes out. undici's `request()` wraps each answer in a Node stream inside an
 * async resource, for callers that read bodies piece by piece; the server's answers are small
 * JSON read whole, so a dispatch handler that keeps the chunks does the same with less work on
 * the path of every poll and every reply. A large answer that says its length (a poll's answer
 * after a burst: tens of MB) is copied into one buffer as its pieces arrive, so that the copy
 * overlaps the transfer instead of following it.
 */
import type { Dispatcher } from "undici";

export interface TextResponse {
  statusCode: number;
  /** Lower-case names; a header sent twice has an array. */
  headers: Record<string, string | string[] | undefined>;
  /** The body, decoded as UTF-8. */
  text: string;
}

/** The largest answer read: far above any answer of the chat server (its largest are a few MB). */
export const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** From this declared length on, the body is gathered into one buffer as it arrives. */
const GATHER_FROM_BYTES = 256 * 1024;

/** The answer grew past its cap: the exchange is aborted with this (`code` RESPONSE_TOO_LARGE). */
export class ResponseTooLarge extends Error {
  readonly code = "RESPONSE_TOO_LARGE";
  constructor(readonly maxBytes: number) {
    super(`the answer is larger than ${maxBytes} bytes`);
  }
}

/**
 * Send `options` through `dispatcher`. Rejects with undici's error (its `code` says which: a
 * timeout, a reset…), with {@link ResponseTooLarge} once the body passes `maxBytes`, or with
 * `signal`'s reason once it aborts.
 */
export function requestText(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  signal?: AbortSignal | null,
  maxBytes = MAX_RESPONSE_BYTES,
): Promise<TextResponse> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    dispatcher.dispatch(options, new TextHandler(resolve, reject, signal ?? undefined, maxBytes));
  });
}

class TextHandler implements Dispatcher.DispatchHandler {
  #controller: Dispatcher.DispatchController | undefined;
  #status = 0;
  #headers: TextResponse["headers"] = {};
  readonly #chunks: Buffer[] = [];
  /** The body so far, when the answer declared a large length (see GATHER_FROM_BYTES). */
  #whole: Buffer | undefined;
  #size = 0;
  #settled = false;
  readonly #onAbort: (() => void) | undefined;

  constructor(
    private readonly resolve: (response: TextResponse) => void,
    private readonly reject: (err: unknown) => void,
    private readonly signal: AbortSignal | undefined,
    private readonly maxBytes: number,
  ) {
    if (signal) {
      this.#onAbort = () => this.#controller?.abort(signal.reason);
      signal.addEventListener("abort", this.#onAbort, { once: true });
    }
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    // Aborted while the request waited for a connection.
    if (this.signal?.aborted) controller.abort(this.signal.reason);
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    // 1xx answers come before the real one.
    if (statusCode < 200) return;
    this.#status = statusCode;
    this.#headers = headers;
    const declared = Number(headers["content-length"]);
    if (Number.isSafeInteger(declared) && declared >= GATHER_FROM_BYTES && declared <= this.maxBytes)
      this.#whole = Buffer.allocUnsafe(declared);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const at = this.#size;
    this.#size += chunk.length;
    const whole = this.#whole;
    if (this.#size > this.maxBytes) controller.abort(new ResponseTooLarge(this.maxBytes));
    // undici's parser ends a body at its declared length: the pieces fit.
    else if (whole !== undefined) chunk.copy(whole, at);
    else this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.#settled) return;
    const chunks = this.#chunks;
    const whole = this.#whole;
    const text =
      whole !== undefined
        ? whole.toString("utf8", 0, this.#size)
        : chunks.length === 1
          ? chunks[0]!.toString("utf8")
          : Buffer.concat(chunks).toString("utf8");
    this.#settle();
    this.resolve({ statusCode: this.#status, headers: this.#headers, text });
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    if (this.#settled) return;
    this.#settle();
    this.reject(error);
  }

  #settle(): void {
    this.#settled = true;
    if (this.#onAbort) this.signal?.removeEventListener("abort", this.#onAbort);
  }
}
