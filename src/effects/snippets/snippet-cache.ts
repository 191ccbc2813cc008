/**
 * `ctx.snippets`: the bot's own saved snippets (see
 * docs/internals/server-behaviour.md#saved-snippets), cached per bot and loaded on first use. It
 * stays fresh from `saved_snippets` events when the queue receives them (`bot.track("snippets")`),
 * else is reloaded after a minute; the bot's own writes update it at once.
 */
import { ApiError, RateLimitError } from "../../api/errors.ts";
import type { SavedSnippetsApi } from "../../api/resources/saved-snippets.ts";
import { BothostError } from "../../errors/bothost-error.ts";
import type { Clock } from "../../time/clock.ts";
import type { EventMap } from "../../wire/events.ts";
import { featureLevels } from "../../wire/feature-levels.ts";
import type { SavedSnippet } from "../../wire/records.ts";
import { codePointLength } from "../limits/code-points.ts";
import { isRefusal } from "../local-echo.ts";

export type { SavedSnippet };

/**
 * A saved-snippet call that cannot work: a blank or too long title or content (checked before
 * the request), or an update of a title the bot has no snippet for.
 */
export class SnippetError extends BothostError<"SNIPPET_INVALID" | "SNIPPET_NOT_FOUND"> {
  override readonly name = "SnippetError";

  constructor(
    code: "SNIPPET_INVALID" | "SNIPPET_NOT_FOUND",
    message: string,
    /** The parameter at fault, when known: the snippet's `title` or `content`. */
    readonly field?: "title" | "content",
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

/** What {@link Snippets.ensure} did. */
export interface EnsureResult {
  snippet: SavedSnippet;
  action: "created" | "updated" | "unchanged";
}

/**
 * The bot's saved snippets, by title (titles are compared after trimming, case-sensitively; if
 * several snippets share a title, the oldest is the one used).
 *
 * @example
 * ```ts
 * await ctx.snippets.ensure("Welcome", "Hi, and welcome to the team!"); // idempotent
 * const welcome = await ctx.snippets.get("Welcome");
 * ```
 */
export interface Snippets {
  /** Every snippet, oldest first. */
  list(): Promise<SavedSnippet[]>;
  get(title: string): Promise<SavedSnippet | undefined>;
  create(title: string, content: string): Promise<SavedSnippet>;
  /** @throws {SnippetError} `SNIPPET_NOT_FOUND` when no snippet has this title. */
  update(title: string, changes: { title?: string; content?: string }): Promise<SavedSnippet>;
  /** Resolves false when there was no such snippet. */
  delete(title: string): Promise<boolean>;
  /** Create the snippet if missing, update its content if it differs, otherwise do nothing. */
  ensure(title: string, content: string): Promise<EnsureResult>;
}

export interface SnippetCacheOptions {
  api: SavedSnippetsApi;
  /** Whether the bot's queue receives `saved_snippets` events (the first "no" is logged). */
  tracked: () => boolean;
  /** The server's feature level, if known (editing needs 368; below it, update = delete + create). */
  featureLevel: () => number | undefined;
  clock: Clock;
}

type SnippetEvent = EventMap["saved_snippets"];

export class SnippetCache implements Snippets {
  readonly #lock = new KeyedLock();
  #byId: Map<number, SavedSnippet> | undefined;
  #loadedAt = 0;
  #loading: Promise<Map<number, SavedSnippet>> | undefined;
  /** Events that arrived while a load was in flight, applied once it lands. */
  #pending: SnippetEvent[] = [];

  constructor(private readonly o: SnippetCacheOptions) {}

  /** Apply one `saved_snippets` event. Ignored until the cache is first used. */
  apply(event: SnippetEvent): void {
    if (this.#loading) this.#pending.push(event);
    if (this.#byId) applyTo(this.#byId, event);
  }

  /** Events may have been missed (a new queue): reload on next use. */
  invalidate(): void {
    this.#byId = undefined;
  }

  async list(): Promise<SavedSnippet[]> {
    const byId = await this.#fresh();
    return [...byId.values()].sort((a, b) => a.id - b.id).map((s) => ({ ...s }));
  }

  async get(title: string): Promise<SavedSnippet | undefined> {
    const found = this.#find(await this.#fresh(), snippetField("title", title));
    return found && { ...found };
  }

  async create(title: string, content: string): Promise<SavedSnippet> {
    const t = snippetField("title", title);
    const c = snippetField("content", content);
    return this.#lock.run(t, () => this.#create(t, c));
  }

  async update(title: string, changes: { title?: string; content?: string }): Promise<SavedSnippet> {
    const t = snippetField("title", title);
    const next = {
      ...(changes.title !== undefined ? { title: snippetField("title", changes.title) } : {}),
      ...(changes.content !== undefined ? { content: snippetField("content", changes.content) } : {}),
    };
    return this.#lock.run(t, async () => {
      const found = this.#find(await this.#fresh(), t);
      if (!found) {
        throw new SnippetError(
          "SNIPPET_NOT_FOUND",
          `No saved snippet titled "${t}"; create it first (or use ctx.snippets.ensure).`,
          "title",
        );
      }
      return this.#update(found, next);
    });
  }

  async delete(title: string): Promise<boolean> {
    const t = snippetField("title", title);
    return this.#lock.run(t, async () => {
      const found = this.#find(await this.#fresh(), t);
      return found ? this.deleteId(found.id) : false;
    });
  }

  /** Deletes snippet `id` (whatever its title now); false when it was gone already. */
  async deleteId(id: number): Promise<boolean> {
    let lost = false;
    try {
      await this.o.api.delete(id, { retry: false }).catch(async (err: unknown) => {
        // A 429 was not acted on: tried again as the client would have, a 404 then not ours.
        if (err instanceof RateLimitError) return this.o.api.delete(id);
        if (isRefusal(err)) throw err;
        // Maybe deleted with its answer lost: a 404 now is that first attempt's doing.
        lost = true;
        await this.o.api.delete(id);
      });
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) {
        // The server may have deleted it with its answer lost: the next read reloads the list.
        this.invalidate();
        throw err;
      }
      // 404: deleted elsewhere first (the cache was behind), unless by the attempt whose answer was lost.
      this.#byId?.delete(id);
      return lost;
    }
    this.#byId?.delete(id);
    return true;
  }

  async ensure(title: string, content: string): Promise<EnsureResult> {
    const t = snippetField("title", title);
    const c = snippetField("content", content);
    return this.#lock.run(t, async () => {
      for (let tries = 2; ; tries--) {
        const found = this.#find(await this.#fresh(), t);
        if (!found) return { snippet: await this.#create(t, c), action: "created" };
        if (found.content === c) return { snippet: { ...found }, action: "unchanged" };
        try {
          return { snippet: await this.#update(found, { content: c }), action: "updated" };
        } catch (err) {
          // Deleted elsewhere while the cache (untracked, or behind its events) still held it:
          // the list was reloaded, so the next look creates it or finds another of that title.
          if (!(err instanceof SnippetError && err.code === "SNIPPET_NOT_FOUND") || tries === 1) throw err;
        }
      }
    });
  }

  async #create(title: string, content: string): Promise<SavedSnippet> {
    let id: number;
    try {
      ({ saved_snippet_id: id } = await this.o.api.create({ title, content }));
    } catch (err) {
      // The server may have stored it with its answer lost: the next read reloads the list, so a
      // second ensure (or a run again's look for the create) finds it instead of making another.
      this.invalidate();
      throw err;
    }
    const snippet = { id, title, content, date_created: Math.floor(this.o.clock.now() / 1000) };
    // The add event (if tracked) replaces this with the server's own record.
    if (!this.#byId?.has(id)) this.#byId?.set(id, snippet);
    return { ...snippet };
  }

  async #update(found: SavedSnippet, changes: { title?: string; content?: string }): Promise<SavedSnippet> {
    const level = this.o.featureLevel();
    if (level !== undefined && level < featureLevels.savedSnippetsEdit) {
      // No PATCH before FL 368: replace the snippet (its id changes).
      await this.o.api.delete(found.id);
      this.#byId?.delete(found.id);
      return this.#create(changes.title ?? found.title, changes.content ?? found.content);
    }
    try {
      await this.o.api.update(found.id, changes);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
      // The cache was behind: the snippet is gone from the server. Reload on next use.
      this.invalidate();
      throw new SnippetError(
        "SNIPPET_NOT_FOUND",
        `Saved snippet "${found.title}" (id ${found.id}) no longer exists on the server: it was deleted elsewhere.`,
        "title",
        { cause: err },
      );
    }
    const snippet = { ...found, ...changes };
    this.#byId?.set(found.id, snippet);
    return { ...snippet };
  }

  #find(byId: Map<number, SavedSnippet>, title: string): SavedSnippet | undefined {
    let best: SavedSnippet | undefined;
    for (const s of byId.values()) if (s.title === title && (!best || s.id < best.id)) best = s;
    return best;
  }

  async #fresh(): Promise<Map<number, SavedSnippet>> {
    const tracked = this.o.tracked();
    const expired = !tracked && this.o.clock.now() - this.#loadedAt >= 60_000;
    if (this.#byId && !expired) return this.#byId;
    this.#loading ??= this.#load().finally(() => {
      this.#loading = undefined;
    });
    return this.#loading;
  }

  async #load(): Promise<Map<number, SavedSnippet>> {
    this.#pending = [];
    const { saved_snippets } = await this.o.api.list();
    const byId = new Map(saved_snippets.map((s) => [s.id, { ...s }]));
    // Events that raced the GET: applying one the list already reflects changes nothing.
    for (const event of this.#pending.splice(0)) applyTo(byId, event);
    this.#byId = byId;
    this.#loadedAt = this.o.clock.now();
    return byId;
  }
}

function applyTo(byId: Map<number, SavedSnippet>, event: SnippetEvent): void {
  if (event.op === "remove") byId.delete(event.saved_snippet_id);
  else byId.set(event.saved_snippet.id, { ...event.saved_snippet });
}

/**
 * `value` stripped as the server stores it, or `SNIPPET_INVALID` (see
 * docs/internals/server-behaviour.md#saved-snippets: both fields are stripped, must not be blank,
 * and are at most 60 (title) and 10000 (content) code points).
 */
export function snippetField(field: "title" | "content", value: string): string {
  const max = field === "title" ? 60 : 10_000;
  if (typeof value !== "string") {
    throw new SnippetError(
      "SNIPPET_INVALID",
      `Snippet ${field} must be a string, got ${typeof value}.`,
      field,
    );
  }
  const text = value.trim();
  if (text === "") {
    throw new SnippetError(
      "SNIPPET_INVALID",
      `Snippet ${field} is blank; the server refuses blank ${field}s.`,
      field,
    );
  }
  const length = codePointLength(text);
  if (length > max) {
    throw new SnippetError(
      "SNIPPET_INVALID",
      `Snippet ${field} is ${length} characters; the server allows at most ${max}. Shorten it.`,
      field,
    );
  }
  return text;
}

/** Runs async work one at a time per key (in this process), so read-then-write stays consistent. */
class KeyedLock {
  readonly #tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const result = (this.#tails.get(key) ?? Promise.resolve()).then(fn, fn);
    const tail = result.catch(() => undefined);
    this.#tails.set(key, tail);
    try {
      return await result;
    } finally {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}
