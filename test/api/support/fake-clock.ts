/**
 * A clock for tests. In "auto" mode every sleep returns at once and moves time forward, so the
 * waits a test expects are read from `sleeps`. In "manual" mode sleeps stay pending until
 * `advance()` moves time past them.
 */
import type { Clock } from "../../../src/api/clock.ts";

interface Pending {
  until: number;
  resolve: () => void;
}

export class FakeClock implements Clock {
  time = 1_700_000_000_000;
  /** Every sleep asked for, in milliseconds, in order. */
  readonly sleeps: number[] = [];
  private readonly pending: Pending[] = [];

  constructor(private readonly mode: "auto" | "manual" = "auto") {}

  now(): number {
    return this.time;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.mode === "auto") {
      this.time += ms;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const entry: Pending = { until: this.time + ms, resolve };
      this.pending.push(entry);
      signal?.addEventListener(
        "abort",
        () => {
          this.pending.splice(this.pending.indexOf(entry), 1);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }

  /** Number of sleeps still waiting (manual mode). */
  get waiting(): number {
    return this.pending.length;
  }

  /** Move time forward and wake every sleep that is due. */
  advance(ms: number): void {
    this.time += ms;
    for (const entry of [...this.pending]) {
      if (entry.until <= this.time) {
        this.pending.splice(this.pending.indexOf(entry), 1);
        entry.resolve();
      }
    }
  }
}
