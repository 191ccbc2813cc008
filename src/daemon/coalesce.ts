/**
 * Coalesce calls of an async operation: callers that arrive while it runs share the next run,
 * so a burst of N flush requests costs two flushes, not N, and every caller's writes are covered.
 */
export function coalesce(operation: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  const runOnce = (): Promise<void> => {
    running = operation().finally(() => {
      running = undefined;
    });
    return running;
  };
  const runNext = (): Promise<void> => {
    next = undefined;
    return runOnce();
  };
  return () => {
    if (!running) return runOnce();
    next ??= running.then(runNext, runNext);
    return next;
  };
}
