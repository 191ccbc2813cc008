/**
 * The server checks of the bots a daemon starts together (its start, a reload, a cluster round)
 * share one registration per server URL: a URL names one organization, so what the server says
 * there to one bot holds for the others, and each bot's account is spared the two calls (the
 * registration and the deletion of its queue) that its own look would cost. A bot started alone
 * (outside such a round) looks for itself, and so does each bot whose shared look failed (its
 * key rejected, or its bot stopped).
 */
import type { ServerIdentity } from "../state/server-identity.ts";
import { untilAborted } from "./setup-deadline.ts";

export class ServerLooks {
  /** The rounds under way: looks are shared while there is one. */
  #rounds = 0;
  readonly #looks = new Map<string, Promise<ServerIdentity | undefined>>();

  /** Runs `start`; the bots it starts share one look at each server URL. */
  async round<T>(start: () => Promise<T>): Promise<T> {
    this.#rounds++;
    try {
      return await start();
    } finally {
      if (--this.#rounds === 0) this.#looks.clear();
    }
  }

  /**
   * The identity of the server at `url`: another bot's look in this round, else `own()` (shared
   * from then on). Undefined when `own()` found none (the bot's key rejected, or `signal` aborted).
   */
  async identity(
    url: string,
    signal: AbortSignal,
    own: () => Promise<ServerIdentity | undefined>,
  ): Promise<ServerIdentity | undefined> {
    if (this.#rounds === 0) return own();
    const shared = this.#looks.get(url);
    if (shared !== undefined) {
      const seen = await untilAborted(
        shared.catch(() => undefined),
        signal,
      );
      if (seen !== undefined || signal.aborted) return seen;
    }
    const mine = own();
    this.#looks.set(url, mine);
    return mine;
  }
}
