/**
 * assistant: answers direct messages and mentions with a language model behind any
 * OpenAI-compatible chat-completions endpoint (OpenAI, a local Ollama or vLLM), the answer
 * streamed into one message as it is written (`ctx.progress`). The topic's recent messages,
 * fetched from the server, are the model's context. Each person has a cap on calls and tokens per
 * hour; when the endpoint is down, refuses or is too slow, the person is told so in plain words.
 * Under `dry_run: true` and in a backtest the endpoint is never called: the bot says what it would ask.
 *
 * Config:
 * ```yaml
 * bots:
 *   assistant:
 *     module: ./bots/assistant.ts
 *     email: assistant-bot@chat.example.org
 *     api_key: ${ASSISTANT_BOT_API_KEY}
 *     handler_timeout: 5m                 # long answers take a while
 *     settings:
 *       base_url: http://localhost:11434/v1   # Ollama; vLLM: http://host:8000/v1; OpenAI: https://api.openai.com/v1
 *       model: llama3.2
 *       api_key_env: OPENAI_API_KEY         # the environment variable holding the endpoint's key; unset: none sent
 *       system_prompt: You are a helpful assistant in a team chat. Answer briefly, in Markdown.
 *       context_messages: 20                # recent messages of the topic sent as context (0-100)
 *       context_chars: 8000                 # at most this many characters of them
 *       max_tokens: 1024                    # per answer
 *       per_person_hour: { calls: 20, tokens: 20000 }
 *       answer_timeout_seconds: 60          # the endpoint must start answering within this
 *       idle_timeout_seconds: 30            # and never pause longer than this mid-answer
 * ```
 */
import { defineBot } from "bothost";
import { z } from "zod";
import { EndpointError, streamChat } from "./assistant/endpoint.ts";
import { historyOf } from "./assistant/history.ts";
import { Quota } from "./assistant/quota.ts";

const Settings = z.object({
  /** The endpoint's base URL, up to (not including) `/chat/completions`. */
  base_url: z.url({ protocol: /^https?$/ }),
  model: z.string().trim().min(1),
  /** Name of the environment variable that holds the endpoint's API key. */
  api_key_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
    .default("ASSISTANT_API_KEY"),
  system_prompt: z
    .string()
    .trim()
    .min(1)
    .max(8_000)
    .default("You are a helpful assistant in a team chat. Answer briefly, in Markdown."),
  context_messages: z.number().int().min(0).max(100).default(20),
  context_chars: z.number().int().min(0).max(100_000).default(8_000),
  max_tokens: z.number().int().min(1).max(100_000).default(1_024),
  temperature: z.number().min(0).max(2).optional(),
  per_person_hour: z
    .object({
      calls: z.number().int().min(1).default(20),
      tokens: z.number().int().min(1).default(20_000),
    })
    .prefault({}),
  answer_timeout_seconds: z.number().min(1).max(600).default(60),
  idle_timeout_seconds: z.number().min(1).max(600).default(30),
});

/** What the person reads for each kind of endpoint failure. */
const TOLD = {
  down: "The language model is not reachable right now. Please try again later.",
  slow: "The language model did not start answering in time. Please try again in a while.",
  stalled: "The language model stopped answering midway; the answer above is incomplete.",
  refused: "The language model could not answer this request.",
} as const;

/** What an answer's message shows before its text, and once its text was posted anew (past 30 s). */
const THINKING = "Thinking…";
const MOVED = "(finished: see below)";

/** A rough count of tokens for endpoints that report none: about four characters each. */
const estimateTokens = (chars: number) => Math.ceil(chars / 4);

export default defineBot({
  settings: Settings,
  setup(bot, s) {
    const apiKey = process.env[s.api_key_env] || undefined;
    bot.on("message", { addressed: true }, async (ctx) => {
      const sender = ctx.sender!;
      if (sender.isBot) return;
      const quota = new Quota(ctx.state, s.per_person_hour);
      const left = await quota.left(sender.id, ctx.now());
      if ("until" in left) {
        const minutes = Math.max(1, Math.ceil((left.until - ctx.now()) / 60_000));
        await ctx.reply(`You have reached your hourly limit with me; ask again in ${minutes} min.`);
        return;
      }
      const history = await historyOf(ctx, s.context_messages, s.context_chars, new Set([THINKING, MOVED]));
      const messages = [
        { role: "system" as const, content: s.system_prompt },
        ...history,
        { role: "user" as const, content: `${sender.name}: ${ctx.text || "(empty message)"}` },
      ];
      if (ctx.bot.dryRun) {
        // A dry run or a backtest: the endpoint is outside what bothost captures, and each call costs.
        ctx.log.info(
          { rule: "answer", model: s.model, context: history.length },
          "assistant: would ask the model (a dry run: the endpoint is not called)",
        );
        await ctx.reply(
          `(dry run: ${s.model} would be asked, with ${history.length} earlier messages as context)`,
        );
        return;
      }
      const progress = await ctx.progress(THINKING, {
        ack: { working: "eyes", done: "check", failed: "warning" },
        movedNote: MOVED,
      });
      let used: number | undefined;
      try {
        const pieces = streamChat({
          baseUrl: s.base_url,
          apiKey,
          model: s.model,
          messages,
          maxTokens: Math.min(s.max_tokens, left.tokens),
          temperature: s.temperature,
          answerTimeoutMs: s.answer_timeout_seconds * 1000,
          idleTimeoutMs: s.idle_timeout_seconds * 1000,
          signal: ctx.signal,
        });
        for await (const piece of pieces) {
          if ("text" in piece) progress.append(piece.text);
          else used = piece.usedTokens;
        }
        if (progress.text.trim() === "") await progress.done("(The model gave an empty answer.)");
        else await progress.done();
      } catch (err) {
        if (!(err instanceof EndpointError)) throw err;
        const reason = apiKey ? err.message.replaceAll(apiKey, "***") : err.message;
        ctx.log.warn({ kind: err.kind, reason, model: s.model }, "assistant: the endpoint failed");
        await progress.fail(`⚠ ${TOLD[err.kind]} (${reason})`);
      }
      const chars = messages.reduce((sum, m) => sum + m.content.length, 0) + progress.text.length;
      await quota.spend(sender.id, ctx.now(), used ?? estimateTokens(chars));
    });
  },
});
