/**
 * Capture instead of act, for backtests and `dry_run: true`: reads (and the bot's own event queue)
 * are sent; every other call is recorded and answered as the server would, without sending it.
 */
import type { Clock } from "../time/clock.ts";
import type { Params } from "./encode.ts";
import type { HttpMethod, RequestFn } from "./transport.ts";

/** A call a bot would have made. */
export interface CapturedCall {
  method: HttpMethod;
  /** The API path, e.g. `/messages` or `/messages/42/reactions`. */
  path: string;
  params: Params;
  /** The id the answer gave the bot for what it would have created, if any. */
  createdId?: number;
}

/** Calls that change nothing on the server but the bot's own event queue: these are sent. */
export function onlyReads(method: HttpMethod, path: string): boolean {
  if (method === "GET") return true;
  if (method === "POST") return path === "/register" || path === "/messages/render";
  return method === "DELETE" && path === "/events";
}

/** The id field the server answers with when a POST creates something. */
const CREATED: Record<string, string> = {
  "/messages": "id",
  "/scheduled_messages": "scheduled_message_id",
  "/saved_snippets": "saved_snippet_id",
  "/channel_folders/create": "channel_folder_id",
};

/** What the server answers, beyond an id, to a POST whose answer has fields it always sends. */
const ANSWERS: Record<string, Record<string, unknown>> = {
  "/users/me/subscriptions": { subscribed: {}, already_subscribed: {} },
};

/**
 * Ids given to captured creations: far above any real id, so a bot that later uses one (to edit
 * what it "sent") is captured again rather than touching a real message.
 */
const FIRST_CAPTURED_ID = 9_000_000_000_000;

/** `send`, except that calls which change something go to `capture` and get a made-up answer. */
export function capturing(send: RequestFn, capture: (call: CapturedCall) => void): RequestFn {
  let nextId = FIRST_CAPTURED_ID;
  return (async (method: HttpMethod, path: string, params: Params = {}, options = {}) => {
    if (onlyReads(method, path)) return send(method, path, params, options);
    const field = method === "POST" ? CREATED[path] : undefined;
    const answer: Record<string, unknown> = method === "POST" ? { ...ANSWERS[path] } : {};
    const call: CapturedCall = { method, path, params };
    if (field !== undefined) {
      call.createdId = nextId++;
      answer[field] = call.createdId;
    }
    capture(call);
    return options.schema ? options.schema.parse(answer) : answer;
  }) as RequestFn;
}

/**
 * The people a captured direct message (sent or scheduled) goes to: user ids, or emails where the
 * bot gave emails. Empty for any other call.
 */
export function directRecipients(call: CapturedCall): (number | string)[] {
  const p = call.params as Record<string, unknown>;
  if (call.method !== "POST" || (call.path !== "/messages" && call.path !== "/scheduled_messages")) return [];
  if (p.type !== "direct" && p.type !== "private") return [];
  // `to` as a bot passes it (an array), or as the API takes it (JSON, or a comma-separated list).
  let to = p.to;
  if (typeof to === "string" && to.trim().startsWith("[")) {
    try {
      to = JSON.parse(to);
    } catch {
      // Not JSON after all: read as a list.
    }
  }
  const items: unknown[] = Array.isArray(to) ? to : typeof to === "string" ? to.split(",") : [to];
  return items.flatMap((v) => {
    if (typeof v === "number") return [v];
    const text = String(v ?? "").trim();
    return text === "" ? [] : [/^\d+$/.test(text) ? Number(text) : text];
  });
}

/**
 * What a captured call would have done, in a line: `report message 42 as spam: …`. `channelName`
 * names a channel the call gives by id; `personName` a person a direct message goes to, by id or
 * email (one it does not know is shown as `user 12`, or as the email).
 */
export function describeCall(
  call: CapturedCall,
  channelName?: (id: number) => string | undefined,
  personName?: (user: number | string) => string | undefined,
): string {
  const p = call.params as Record<string, unknown>;
  const text = (v: unknown, max = 80) => {
    const s = String(v ?? "").replace(/\s+/g, " ");
    return JSON.stringify(s.length > max ? `${s.slice(0, max - 1)}…` : s);
  };
  const on = /^\/messages\/(\d+)(\/\w+)?$/.exec(call.path);
  const channel = () => {
    const id = Number(p.to);
    return Number.isInteger(id) ? (channelName?.(id) ?? `channel ${id}`) : String(p.to);
  };
  const where = () =>
    p.type === "stream" || p.type === "channel"
      ? `to #${channel()} > ${p.topic ?? ""}`
      : `a direct message to ${directRecipients(call)
          .map((u) => personName?.(u) ?? (typeof u === "number" ? `user ${u}` : u))
          .join(", ")}`;
  if (call.method === "POST" && call.path === "/messages") return `send ${where()}: ${text(p.content)}`;
  if (call.method === "POST" && call.path === "/scheduled_messages") {
    const at = new Date(Number(p.scheduled_delivery_timestamp) * 1000).toISOString();
    return `schedule for ${at} ${where()}: ${text(p.content)}`;
  }
  if (on && on[2] === "/report") {
    return `report message ${on[1]} as ${p.report_type}${p.description ? `: ${text(p.description, 120)}` : ""}`;
  }
  if (on && on[2] === "/reactions") {
    return `${call.method === "POST" ? "react" : "unreact"} :${p.emoji_name}: on message ${on[1]}`;
  }
  if (on && !on[2]) return `${call.method === "DELETE" ? "delete" : "edit"} message ${on[1]}`;
  const snippet = /^\/saved_snippets(?:\/(\d+))?$/.exec(call.path);
  if (snippet) return describeSnippet(call.method, snippet[1], p, text);
  const scheduled = /^\/scheduled_messages\/(\d+)$/.exec(call.path);
  if (scheduled && call.method === "DELETE") return `cancel scheduled message ${scheduled[1]}`;
  if (scheduled && call.method === "PATCH") {
    const ts = p.scheduled_delivery_timestamp;
    const at = ts === undefined ? "" : ` for ${new Date(Number(ts) * 1000).toISOString()}`;
    if (p.content === undefined && p.topic === undefined && p.to === undefined)
      return `reschedule scheduled message ${scheduled[1]}${at}`;
    return `edit scheduled message ${scheduled[1]}${at}${p.content === undefined ? "" : `: ${text(p.content)}`}`;
  }
  if (call.method === "POST" && call.path === "/users/me/subscriptions") {
    const names = (p.subscriptions as { name?: string }[] | undefined)?.map((s) => `#${s.name}`);
    return `subscribe to ${names?.join(", ") ?? "channels"}`;
  }
  return `${call.method} ${call.path}`;
}

/** A saved-snippet call in words: `save the snippet "FAQ": "…"`, `rename snippet 7 to "FAQ 2"`. */
function describeSnippet(
  method: string,
  id: string | undefined,
  p: Record<string, unknown>,
  text: (v: unknown) => string,
): string {
  if (id === undefined) return `save the snippet ${text(p.title)}: ${text(p.content)}`;
  if (method === "DELETE") return `delete snippet ${id}`;
  const content = p.content === undefined ? "" : `: ${text(p.content)}`;
  if (p.title === undefined) return `edit snippet ${id}${content}`;
  return `rename snippet ${id} to ${text(p.title)}${content ? ` and edit it${content}` : ""}`;
}

/** The calls a dry-run bot would have made: how many, and the latest few. */
export class CaptureLog {
  count = 0;
  readonly recent: { at: string; call: CapturedCall; does: string }[] = [];
  /** Names the channels calls give by id (the bot's runtime knows them). */
  channelName: ((id: number) => string | undefined) | undefined;

  /** `clock`: when each call was captured. */
  constructor(
    readonly clock: Pick<Clock, "now">,
    readonly keep = 20,
  ) {}

  add(call: CapturedCall): void {
    this.count++;
    this.recent.push({
      at: new Date(this.clock.now()).toISOString(),
      call,
      does: describeCall(call, this.channelName),
    });
    if (this.recent.length > this.keep) this.recent.shift();
  }
}
