/**
 * A streamed answer from an OpenAI-compatible chat-completions endpoint (OpenAI, a local Ollama
 * or vLLM): POST `<base_url>/chat/completions` with `stream: true`, read as server-sent events
 * (`data: {json}` lines, `data: [DONE]` at the end), each event's `choices[0].delta.content` a
 * piece of the answer. Failures come out as an {@link EndpointError} saying which kind.
 */
import { request } from "undici";

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface ChatRequest {
  baseUrl: string;
  /** Sent as a bearer token when set; never logged or shown. */
  apiKey: string | undefined;
  model: string;
  messages: ChatMessage[];
  maxTokens: number;
  temperature?: number | undefined;
  /** How long to wait for the endpoint to answer at all (ms). */
  answerTimeoutMs: number;
  /** How long the stream may pause between two pieces (ms). */
  idleTimeoutMs: number;
  signal: AbortSignal;
}

/** What went wrong: unreachable, too slow to answer, stalled mid-answer, or an error answer. */
export type EndpointFailure = "down" | "slow" | "stalled" | "refused";

export class EndpointError extends Error {
  override readonly name = "EndpointError";
  constructor(
    readonly kind: EndpointFailure,
    message: string,
  ) {
    super(message);
  }
}

/** The pieces of the answer as they come, then the token count if the endpoint reported one. */
export type ChatPiece = { text: string } | { usedTokens: number };

const CONNECT_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ECONNRESET", "EHOSTUNREACH"]);

/**
 * A failure of the call itself, as an {@link EndpointError}; an abort stays as it is. Told by the
 * error's `code`, not by `instanceof undici.errors.…`: `request` goes through the global
 * dispatcher, and from Node.js 22 on, in a process where an ES module imports `node:http`, that
 * is the runtime's own bundled undici, whose error classes (on Node.js 22, undici 6) are not this
 * package's.
 */
function asEndpointError(err: unknown, o: ChatRequest): unknown {
  if (o.signal.aborted || err instanceof EndpointError) return err;
  const own = (err as { code?: string } | null)?.code;
  if (own === "UND_ERR_HEADERS_TIMEOUT") {
    return new EndpointError("slow", `no answer within ${o.answerTimeoutMs / 1000} s`);
  }
  if (own === "UND_ERR_BODY_TIMEOUT") {
    return new EndpointError("stalled", `the answer stopped for ${o.idleTimeoutMs / 1000} s`);
  }
  const code = (err as { cause?: { code?: string } } | null)?.cause?.code ?? own;
  if (own === "UND_ERR_CONNECT_TIMEOUT" || (code && CONNECT_CODES.has(code))) {
    return new EndpointError("down", `cannot connect (${code ?? "timeout"})`);
  }
  if (own === "UND_ERR_SOCKET") return new EndpointError("down", "the connection was cut");
  return err;
}

/** The error message of an error answer's body, shortened. */
function errorMessageOf(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: string } | string; message?: string };
    const message =
      typeof parsed.error === "string" ? parsed.error : (parsed.error?.message ?? parsed.message);
    if (message) return message.slice(0, 200);
  } catch {
    // Not JSON: the text itself.
  }
  return body.trim().slice(0, 200) || "no details";
}

/** Stream the answer to `o.messages`. */
export async function* streamChat(o: ChatRequest): AsyncGenerator<ChatPiece> {
  const url = `${o.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  const body = {
    model: o.model,
    messages: o.messages,
    stream: true,
    max_tokens: o.maxTokens,
    ...(o.temperature === undefined ? {} : { temperature: o.temperature }),
  };
  let response: Awaited<ReturnType<typeof request>>;
  try {
    response = await request(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "text/event-stream",
        ...(o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {}),
      },
      body: JSON.stringify(body),
      headersTimeout: o.answerTimeoutMs,
      bodyTimeout: o.idleTimeoutMs,
      signal: o.signal,
    });
  } catch (err) {
    throw asEndpointError(err, o);
  }
  if (response.statusCode !== 200) {
    const text = await response.body.text().catch(() => "");
    // The body of a refused key may quote the key: it is not repeated.
    const status = response.statusCode;
    const why = status === 401 || status === 403 ? "the API key was refused" : errorMessageOf(text);
    throw new EndpointError("refused", `answered ${status}: ${why}`);
  }
  const decoder = new TextDecoder();
  let buffered = "";
  try {
    for await (const chunk of response.body) {
      buffered += decoder.decode(chunk as Buffer, { stream: true });
      let newline = buffered.indexOf("\n");
      while (newline >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf("\n");
        if (!line.startsWith("data:")) continue;
        const data = line.slice(5).trim();
        if (data === "[DONE]") return;
        yield* piecesOf(data);
      }
    }
  } catch (err) {
    throw asEndpointError(err, o);
  }
}

/** The pieces in one event's data. */
function* piecesOf(data: string): Generator<ChatPiece> {
  let event: {
    choices?: { delta?: { content?: string | null } }[];
    usage?: { total_tokens?: number } | null;
    error?: { message?: string } | string;
  };
  try {
    event = JSON.parse(data);
  } catch {
    throw new EndpointError("refused", "sent an event that is not JSON");
  }
  if (event.error) throw new EndpointError("refused", `failed mid-answer: ${errorMessageOf(data)}`);
  const text = event.choices?.[0]?.delta?.content;
  if (text) yield { text };
  const used = event.usage?.total_tokens;
  if (typeof used === "number") yield { usedTokens: used };
}
