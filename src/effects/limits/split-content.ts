/**
 * What `ctx.send` and `ctx.reply` do before sending (see
 * docs/internals/server-behaviour.md#sending-messages): the server silently truncates content over
 * `max_message_length` and topics over `max_topic_length`, so a topic that is too long is refused
 * (`TOPIC_TOO_LONG`) and long content is split at paragraph boundaries and sent as several
 * messages, in order (or refused with `CONTENT_TOO_LONG` under `reject`).
 */
import type { SendMessageParams } from "../../api/resources/messages.ts";
import { BothostError } from "../../errors/bothost-error.ts";
import { codePointLength } from "./code-points.ts";
import { ContentTooLongError, checkTopic } from "./limit-errors.ts";

/** What to do with content over the limit: split it into several messages, or throw. */
export type LongMessagePolicy = "split" | "reject";

/**
 * Sends `params` through `send`, within the server's limits, resolving the first message's id.
 * Nothing is sent when the topic or (under `reject`) the content is too long; if a later part of
 * a split message fails, the parts before it stay sent and the error is thrown.
 */
export async function sendWithinLimits(
  send: (params: SendMessageParams) => Promise<{ id: number }>,
  params: SendMessageParams,
  limits: { maxMessageLength: number; maxTopicLength: number; longMessages: LongMessagePolicy },
): Promise<{ id: number }> {
  if ((params.type === "channel" || params.type === "stream") && typeof params.topic === "string") {
    checkTopic(params.topic, limits.maxTopicLength);
  }
  const parts = splitContent(params.content, limits.maxMessageLength, { mode: limits.longMessages });
  let first: { id: number } | undefined;
  for (const content of parts) {
    const sent = await send({ ...params, content });
    first ??= sent;
  }
  // Only blank content over the limit splits into nothing; send it as it is and let the server answer.
  return first ?? send(params);
}

interface Line {
  start: number;
  /** Index of the newline ending the line, or where scanning stopped (past the window). */
  end: number;
  text: string;
  before: readonly OpenFence[];
  after: readonly OpenFence[];
}

interface Cut {
  chunk: string;
  next: string[];
}

const isSpace = (c: string | undefined) => c === " " || c === "\t";
const isBlank = (text: string) => text.trim() === "";

/**
 * Splits `content` into pieces of at most `maxLength` Unicode code points (the server's measure).
 * It cuts at paragraph breaks (blank lines) first, then line breaks, then between words, and
 * only then mid-word; never inside a surrogate pair. It does not cut inside a fenced code block
 * when it can avoid it; a block too long for one message is closed at the cut and reopened (same
 * opening line) in the next piece. The whitespace at a cut is dropped; blank pieces are dropped.
 *
 * Mode `"reject"` throws {@link ContentTooLongError} (`CONTENT_TOO_LONG`) instead of splitting.
 */
export function splitContent(
  content: string,
  maxLength: number,
  options: { mode?: LongMessagePolicy } = {},
): string[] {
  if (!Number.isInteger(maxLength) || maxLength < 1) {
    throw new BothostError(
      "INVALID_ARGUMENT",
      `splitContent: maxLength must be a positive integer (the server's max_message_length), got ${maxLength}.`,
    );
  }
  // Code points never outnumber UTF-16 units: most messages need no counting.
  if (content.length <= maxLength) return [content];
  const length = codePointLength(content);
  if (length <= maxLength) return [content];
  if (options.mode === "reject") throw new ContentTooLongError(length, maxLength);

  const chunks: string[] = [];
  let rest = Array.from(content);
  const state = { fences: true };
  while (rest.length > maxLength) {
    const { chunk, next } = cut(rest, maxLength, state);
    if (!isBlank(chunk)) chunks.push(chunk);
    rest = dropLeadingBlankLines(next);
  }
  const last = rest.join("");
  if (!isBlank(last)) chunks.push(last);
  return chunks;
}

/**
 * One cut of `rest` (code points, longer than `max`), best kind of boundary first. When `max` is
 * too small to close and reopen a block, fence handling is switched off for the rest of the text
 * (`state.fences`): cutting on as plain text keeps every character, where guessing would not.
 */
function cut(rest: string[], max: number, state: { fences: boolean }): Cut {
  const lines = scanLines(rest, max, state.fences);
  const plain = (end: number, resume: number): Cut => ({
    chunk: rest.slice(0, end).join(""),
    next: rest.slice(resume),
  });

  let paragraph = -1;
  let line = -1;
  for (const l of lines) {
    if (l.end > max || rest[l.end] !== "\n") break;
    if (l.after.length > 0 || isBlank(l.text)) continue;
    line = l.end;
    if (blankLineAt(rest, l.end + 1)) paragraph = l.end;
  }
  if (paragraph > 0) return plain(paragraph, paragraph + 1);
  if (line > 0) return plain(line, line + 1);

  const crossing = lines.at(-1);
  if (crossing !== undefined && crossing.before.length === 0 && crossing.after.length === 0) {
    const word = lastWordBreak(rest, crossing.start, max);
    return word > 0 ? plain(word, skipSpaces(rest, word)) : plain(max, max);
  }
  const fenced = cutInFence(rest, lines, max);
  if (fenced !== undefined) return fenced;
  state.fences = false;
  return cut(rest, max, state);
}

/** A cut inside open fenced blocks: close them in this piece and reopen them in the next. */
function cutInFence(rest: string[], lines: Line[], max: number): Cut | undefined {
  const fenced = (end: number, resume: number, stack: readonly OpenFence[]): Cut => ({
    chunk: rest.slice(0, end).join("") + closingText(stack),
    next: [...Array.from(reopeningText(stack)), ...rest.slice(resume)],
  });
  for (let k = lines.length - 1; k >= 0; k--) {
    const l = lines[k]!;
    const top = l.after.at(-1);
    if (top === undefined || rest[l.end] !== "\n" || l.end <= top.end) continue;
    if (l.end + codePointLength(closingText(l.after)) <= max) return fenced(l.end, l.end + 1, l.after);
  }
  // No whole line fits with the closing fences: cut inside the line that holds the last usable
  // position, between words if possible.
  for (let k = lines.length - 1; k >= 0; k--) {
    const l = lines[k]!;
    const top = l.before.at(-1);
    if (top === undefined || l.after !== l.before) continue; // outside fences, or a fence line
    const limit = max - codePointLength(closingText(l.before));
    if (limit <= l.start || limit <= top.end + 1) continue;
    const to = Math.min(limit, l.end);
    const word = lastWordBreak(rest, Math.max(l.start, top.end + 1), to);
    if (word > top.end) return fenced(word, skipSpaces(rest, word), l.before);
    if (limit <= l.end) return fenced(limit, limit, l.before);
  }
  return undefined;
}

/** The lines that start within the first `max` + 1 code points, with the open fences around each. */
function scanLines(rest: string[], max: number, fences: boolean): Line[] {
  const lines: Line[] = [];
  let stack: readonly OpenFence[] = [];
  for (let start = 0; start <= max && start < rest.length; ) {
    let end = start;
    while (end < rest.length && end <= max + 1 && rest[end] !== "\n") end++;
    const text = rest.slice(start, end).join("");
    const before = stack;
    if (fences) stack = stepFences(stack, text, end);
    lines.push({ start, end, text, before, after: stack });
    if (rest[end] !== "\n") break;
    start = end + 1;
  }
  return lines;
}

/** The largest index in (from, to] holding a space or tab right after a non-space: a word end. */
function lastWordBreak(rest: string[], from: number, to: number): number {
  for (let j = Math.min(to, rest.length - 1); j > from; j--) {
    if (isSpace(rest[j]) && !isSpace(rest[j - 1]) && rest[j - 1] !== "\n") return j;
  }
  return -1;
}

function skipSpaces(rest: string[], from: number): number {
  let i = from;
  while (isSpace(rest[i])) i++;
  return i;
}

/** Whether the line starting at `start` is blank (whitespace only, or the end of the text). */
function blankLineAt(rest: string[], start: number): boolean {
  for (let i = start; i < rest.length && rest[i] !== "\n"; i++) if (!isBlank(rest[i]!)) return false;
  return true;
}

function dropLeadingBlankLines(rest: string[]): string[] {
  let from = 0;
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === "\n") from = i + 1;
    else if (!isBlank(rest[i]!)) break;
  }
  return from === 0 ? rest : rest.slice(from);
}

// Just enough of Zulip's fenced-block rules to split without breaking code blocks: a fence is
// three or more backticks or tildes (up to three spaces of indentation); a block closes on a line
// of the same character, at least as long, with nothing else. `quote` and `spoiler` blocks hold
// Markdown, so fences may nest inside them; code blocks hold plain text.

/** An open fenced block. */
interface OpenFence {
  /** The fence characters, e.g. "```" or "~~~~". */
  marker: string;
  /** The whole opening line, used to reopen the block in the next chunk. */
  opener: string;
  /** Index of the newline that ends the opening line (in the text being scanned). */
  end: number;
  markdown: boolean;
}

const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})([\s\S]*)$/;

/** The stack of open blocks after `line` (which ends at index `end`), given the stack before it. */
function stepFences(stack: readonly OpenFence[], line: string, end: number): readonly OpenFence[] {
  const match = FENCE_LINE.exec(line);
  if (!match) return stack;
  const marker = match[1] ?? "";
  const info = match[2] ?? "";
  const top = stack.at(-1);
  if (top && marker[0] === top.marker[0] && marker.length >= top.marker.length && info.trim() === "") {
    return stack.slice(0, -1);
  }
  if (top && !top.markdown) return stack; // inside code, a fence-like line is just code
  if (marker[0] === "`" && info.includes("`")) return stack; // inline code, not a fence
  const lang = (info.trim().split(/\s+/)[0] ?? "").replace(/^\{?\.?/, "").toLowerCase();
  return [...stack, { marker, opener: line, end, markdown: lang === "quote" || lang === "spoiler" }];
}

/** The text that closes every open block, innermost first, each on its own line. */
function closingText(stack: readonly OpenFence[]): string {
  return stack.reduceRight((text, fence) => `${text}\n${fence.marker}`, "");
}

/** The text that reopens every open block, outermost first, ending in a newline. */
function reopeningText(stack: readonly OpenFence[]): string {
  return stack.map((fence) => `${fence.opener}\n`).join("");
}
