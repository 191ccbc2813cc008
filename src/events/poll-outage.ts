/**
 * A run of failed event-queue requests (the chat server down, a proxy answering 5xx): said at
 * warn as it begins, at info once the server answers again, each retry between them at debug.
 */
import type { Logger } from "../api/logger.ts";
import type { Clock } from "../time/clock.ts";

export class PollOutage {
  /** When the first failed request of the outage was seen; undefined while the server answers. */
  #since: number | undefined;

  /** The level of a failed request's line: warn for the first of an outage, then debug. */
  failed(clock: Clock): "warn" | "debug" {
    if (this.#since !== undefined) return "debug";
    this.#since = clock.now();
    return "warn";
  }

  /**
   * The server answered: an outage begun is said over, with its failed requests and length.
   * Returns the count of failed requests from now on, 0.
   */
  answered(failedRequests: number, { log, clock }: { log: Logger; clock: Clock }): 0 {
    if (this.#since !== undefined)
      log.info({ failedRequests, downMs: clock.now() - this.#since }, "event queue requests succeed again");
    this.#since = undefined;
    return 0;
  }
}
