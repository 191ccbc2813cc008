/**
 * The testing kit's clock and the sandbox's scheduled messages: during an advance, the sandbox
 * sends each one at its minute; when it sent (or failed) one of the bot's, the advance waits for
 * the bot to take in the events that say so and for its recurring announcements to book what
 * comes next, as a daemon running through that time would. Without the wait, an advance of days
 * passed each next occurrence before it was booked: one announcement went out, the others never.
 */
import { sleep } from "../api/sleep.ts";
import type { SandboxControl } from "../sandbox/types.ts";
import type { BotScheduler } from "../scheduler/bot-scheduler.ts";
import { realClock } from "../time/clock.ts";

/** The first whole minute at or after the earliest scheduled message still to go out. */
export function nextDelivery(control: SandboxControl): number | undefined {
  let first: number | undefined;
  for (const s of control.scheduled()) {
    if (s.delivered || s.failed) continue;
    const at = Math.ceil(Number(s.scheduled_delivery_timestamp) / 60) * 60_000;
    if (first === undefined || at < first) first = at;
  }
  return first;
}

/** The clock's listener: deliver what is due, then wait (up to `timeoutMs` a round) for the bot. */
export function deliverScheduled(
  control: SandboxControl,
  userId: number,
  scheduler: () => Pick<BotScheduler, "idle"> | undefined,
  timeoutMs: number,
): () => Promise<void> {
  const over = () =>
    control.scheduled().filter((s) => s.sender_id === userId && (s.delivered || s.failed)).length;
  // Its queue polled again, every event acknowledged: the events reached the bot's scheduler.
  const caughtUp = () =>
    control.queues().every((q) => q.user_id !== userId || (q.parked && q.pending_events === 0));
  const pause = () => control.waitFor(() => false, { timeoutMs }).catch(() => undefined);
  return async () => {
    const before = over();
    control.advanceClock(0);
    if (over() === before) return;
    for (let round = 0; round < 10; round++) {
      await control.waitFor(() => caughtUp() || undefined, { timeoutMs }).catch(() => undefined);
      const steps = scheduler();
      if (steps === undefined) return;
      await Promise.race([steps.idle(), pause()]);
      if (caughtUp()) return;
    }
  };
}

/**
 * The clock's wait after each timer: the work it began ends (up to `timeoutMs`) before the advance
 * goes on: the bot's cron job runs under way, and the recurring announcements' steps (a booking
 * retried after a failure), so a retry at 07:01 books the 08:00 occurrence the advance then passes.
 */
export function jobsDone(
  scheduler: () => Pick<BotScheduler, "idle" | "jobs" | "jobsIdle"> | undefined,
  timeoutMs: number,
): () => Promise<void> {
  return async () => {
    const bot = scheduler();
    if (!bot) return;
    const work = [bot.idle()];
    if (bot.jobs().some((job) => job.running)) work.push(bot.jobsIdle());
    // Bounded in real time; the bound's timer goes once the work is done (an advance fires many timers).
    const done = new AbortController();
    await Promise.race([Promise.all(work), sleep(realClock, timeoutMs, done.signal).catch(() => undefined)]);
    done.abort();
  };
}
