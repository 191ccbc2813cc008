/** A handler run that failed every attempt, as a runtime hands it to `DeadLetters.add`. */
export const failedRun = (n: number) => ({
  source: "queue" as const,
  event: { type: "message", id: n, message: { id: 100 + n, content: `hello ${n}` } },
  error: new Error(`boom ${n}`),
  attempts: 5,
  firstFailedAt: "2026-11-25T10:00:00.000Z",
  lastFailedAt: "2026-11-25T10:01:00.000Z",
});
