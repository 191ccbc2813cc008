/** The dead-letter source's periodic check: one abort listener for its whole run, no timer after stop. */
import { getEventListeners } from "node:events";
import { pino } from "pino";
import { expect, it } from "vitest";
import { DeadLetterSource, RETRY_CHECK_MS } from "../../src/events/dead-letter-source.ts";
import { DeadLetters } from "../../src/state/dead-letters.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";
import { ManualClock } from "../support/manual-clock.ts";

it("checks every few seconds with one abort listener, and stops checking once aborted", async () => {
  const clock = new ManualClock();
  const stop = new AbortController();
  const letters = new DeadLetters(new MemoryStore(), "bot", { max: 10 });
  let generationReads = 0;
  const retryGeneration = letters.retryGeneration.bind(letters);
  letters.retryGeneration = () => {
    generationReads++;
    return retryGeneration();
  };
  const source = new DeadLetterSource({
    letters,
    // No letter is marked for retry, so nothing is handed to the pipeline.
    dispatcher: undefined as never,
    replayJob: async () => true,
    log: pino({ level: "silent" }),
    clock,
    signal: stop.signal,
  });

  await source.start();
  await clock.tick(RETRY_CHECK_MS * 6);
  expect(generationReads).toBe(7);
  expect(getEventListeners(stop.signal, "abort")).toHaveLength(1);

  stop.abort();
  expect(clock.pendingTimers).toBe(0);
  await clock.tick(RETRY_CHECK_MS * 3);
  expect(generationReads).toBe(7);
});
