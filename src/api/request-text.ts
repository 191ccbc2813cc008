/**
 * One HTTP exchange through an undici dispatcher, the answer's body read whole as text: how every
 * call of the client goes out. undici's `request()` wraps each answer in a Node stream inside an
 * async resource, for callers that read bodies piece by piece; the server's answers are small
 * JSON read whole, so a dispatch handler that keeps the chunks does the same with less work on
 * the path of every poll and every reply.
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
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#size += chunk.length;
    if (this.#size > this.maxBytes) controller.abort(new ResponseTooLarge(this.maxBytes));
    else this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.#settled) return;
    const chunks = this.#chunks;
    const text = chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8");
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
