/** What every resource module receives from `createClient`. */
import type { ServerState } from "../feature-level.ts";
import type { Logger } from "../logger.ts";
import type { RequestFn } from "../transport.ts";

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
}
