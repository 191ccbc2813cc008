/**
 * A registration under way when its bot stops may finish for a moment: the queue it made is then
 * known and deleted, instead of left on the server with its reply cut off.
 */
import type { Clock } from "../time/clock.ts";

/** How long a registration under way at the stop may go on. */
export const REGISTER_GRACE_MS = 2_000;

/** A signal that aborts `ms` after `signal` does; `dispose` once it is no longer needed. */
export function graceAfter(
  signal: AbortSignal,
  ms: number,
  clock: Clock,
): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  let timer: ReturnType<Clock["setTimeout"]> | undefined;
  const onAbort = () => {
    timer = clock.setTimeout(() => controller.abort(signal.reason), ms);
  };
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  const dispose = () => {
    signal.removeEventListener("abort", onAbort);
    if (timer !== undefined) clock.clearTimeout(timer);
  };
  return { signal: controller.signal, dispose };
}
