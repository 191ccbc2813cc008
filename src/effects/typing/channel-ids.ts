/**
 * Channel name → id, for helpers that take either (typing needs the id). Names the bot has
 * seen in message events are known at once; others cost one GET /get_stream_id, then cached.
 */
import type { RequestFn } from "../../api/transport.ts";
import { BothostError } from "../../errors/bothost-error.ts";

/**
 * @example
 * ```ts
 * const ids = new ChannelIds(client.request);
 * await ids.resolve("general"); // 5 (asked once)
 * await ids.resolve(5); // 5 (no request)
 * ```
 */
export class ChannelIds {
  readonly #request: RequestFn;
  readonly #byName = new Map<string, number>();
  readonly #byId = new Map<number, string>();

  constructor(request: RequestFn) {
    this.#request = request;
  }

  /** Remember a pairing seen in an event (every message event: known pairs cost one lookup). */
  learn(id: number, name: string): void {
    if (this.#byId.get(id) === name) return;
    this.#byId.set(id, name);
    this.#byName.set(name.toLowerCase(), id);
  }

  /** The name last seen for a channel id, if any. */
  nameOf(id: number): string | undefined {
    return this.#byId.get(id);
  }

  async resolve(channel: number | string, signal?: AbortSignal): Promise<number> {
    if (typeof channel === "number") {
      if (Number.isInteger(channel) && channel > 0) return channel;
      throw new BothostError("INVALID_ARGUMENT", `A channel id must be a positive integer, got ${channel}.`);
    }
    if (typeof channel !== "string" || channel.trim() === "") {
      throw new BothostError("INVALID_ARGUMENT", "A channel must be given by id or by a non-empty name.");
    }
    const known = this.#byName.get(channel.toLowerCase());
    if (known !== undefined) return known;
    const { stream_id } = await this.#request<{ stream_id: number }>(
      "GET",
      "/get_stream_id",
      { stream: channel },
      signal ? { signal } : {},
    );
    this.learn(stream_id, channel);
    return stream_id;
  }
}
