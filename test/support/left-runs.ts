/** What the tests of runs a stop leaves (test/testing/stop-left-*.test.ts) share: their logs' lines, a start after. */
import { expect } from "vitest";

/** The line a left run says when it ends, once the store closed. */
export const LEFT_ENDED = "a handler the stop had left ended";

/** Resolves once `signal` aborted. */
export const aborted = (signal: AbortSignal): Promise<void> =>
  new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve()));

/** A left run said it ended. */
export const leftEnded = (logs: readonly Record<string, unknown>[]): boolean =>
  logs.some((l) => String(l.msg).startsWith(LEFT_ENDED));

/** Error lines (`msg: err.message`), but for those whose error says `except` (a test's own throw). */
export const errorLines = (logs: readonly Record<string, unknown>[], except?: string): string[] =>
  logs
    .filter((l) => Number(l.level) >= 50)
    .map((l) => `${l.msg}: ${(l.err as Error | undefined)?.message}`)
    .filter((line) => except === undefined || !line.endsWith(`: ${except}`));

/** The parts of a kit bot {@link handledOnceAtStart} drives. */
interface StartedAgain {
  start(): Promise<void>;
  handled(id: number): Promise<unknown>;
  nextReply(o: { after: number; where: (m: { content: string }) => boolean }): Promise<{ content: string }>;
  replies(): readonly { content: string }[];
}

/**
 * Started again, the bot handles message `id` (sent as "one") once: its only reply `done: one`.
 * The server's own line, should it have given up on an outgoing-webhook delivery while the bot was
 * down, aside.
 */
export async function handledOnceAtStart(bot: StartedAgain, id: number): Promise<void> {
  await bot.start();
  await bot.handled(id);
  const done = await bot.nextReply({ after: id, where: (m) => m.content.startsWith("done") });
  expect(done.content).toBe("done: one");
  const replies = bot.replies().map((m) => m.content);
  expect(replies.filter((c) => c !== "Failure! Bot is unavailable")).toEqual(["done: one"]);
}
