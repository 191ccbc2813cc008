/** Small statistics helpers for the benchmark tables. */

/** The p-th percentile (0–100) by nearest rank; NaN for an empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Round to `digits` significant figures, for printing. */
export function round(value: number, digits = 3): number {
  if (!Number.isFinite(value) || value === 0) return value;
  const scale = 10 ** (digits - Math.ceil(Math.log10(Math.abs(value))));
  return Math.round(value * scale) / scale;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The most of the ascending `times` (ms) that fall in any window of `windowMs`. */
export function busiest(times: readonly number[], windowMs: number): number {
  let most = 0;
  let from = 0;
  for (let i = 0; i < times.length; i++) {
    while ((times[from] ?? 0) <= (times[i] ?? 0) - windowMs) from++;
    most = Math.max(most, i - from + 1);
  }
  return most;
}

/** Uniform numbers in [0, 1) from a 32-bit seed (mulberry32): the same seed, the same sequence. */
export function uniform(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}
