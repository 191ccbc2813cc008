/** What every resource module receives from `createClient`. */
import type { ServerState } from "../feature-level.ts";
import type { Logger } from "../logger.ts";
import type { RequestFn, RetryOptions } from "../transport.ts";

export interface ResourceContext {
  request: RequestFn;
  state: ServerState;
  logger: Logger;
}

/** Options every typed method takes last. */
export interface CallOptions {
  /** Abort the call (the request, a rate-limit wait, a retry backoff). */
  signal?: AbortSignal;
  /** Override the client's timeout for this call, in milliseconds. */
  timeoutMs?: number;
  /** Override the client's retry settings for this call; `false`: one attempt only (e.g. a caller with its own backoff). */
  retry?: RetryOptions | false;
}
