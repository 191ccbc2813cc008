/**
 * A small Prometheus registry: labelled counters, gauges and histograms, rendered in the text
 * exposition format (version 0.0.4). Hand-written rather than prom-client because bothost needs
 * three metric kinds and one output format; any module may create and increment metrics on the
 * daemon's registry without pulling in a dependency or its default process collectors.
 */

export type Labels = Readonly<Record<string, string | number>>;

type Kind = "counter" | "gauge" | "histogram";

interface Metric {
  readonly name: string;
  readonly help: string;
  readonly kind: Kind;
  render(): string[];
}

/** Default histogram buckets (seconds), from a millisecond to a minute. */
export const DEFAULT_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Escape a label value as the text format requires: backslash, double quote, line feed. */
function escapeValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function labelText(names: readonly string[], values: readonly string[], extra = ""): string {
  const parts = names.map((n, i) => `${n}="${escapeValue(values[i] ?? "")}"`);
  if (extra) parts.push(extra);
  return parts.length > 0 ? `{${parts.join(",")}}` : "";
}

function formatNumber(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Number.POSITIVE_INFINITY) return "+Inf";
  if (n === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(n);
}

abstract class Labelled<V> implements Metric {
  abstract readonly kind: Kind;
  protected readonly series = new Map<string, { values: string[]; value: V }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  protected entry(labels: Labels, init: () => V): { values: string[]; value: V } {
    const values = this.labelNames.map((n) => {
      const v = labels[n];
      if (v === undefined) throw new Error(`metric ${this.name}: label "${n}" is missing`);
      return String(v);
    });
    const key = values.join("\u0000");
    let e = this.series.get(key);
    if (!e) {
      e = { values, value: init() };
      this.series.set(key, e);
    }
    return e;
  }

  abstract render(): string[];
}

/** A value that only goes up (reset when the process restarts). */
export class Counter extends Labelled<{ n: number }> {
  readonly kind = "counter";
  /** Called before rendering: for totals kept elsewhere (e.g. a scheduler's stats), set with `setTotal`. */
  collect: (() => void) | undefined;
  /** Set a total read from a source that only grows (use inside `collect`). */
  setTotal(labels: Labels, total: number): void {
    this.entry(labels, () => ({ n: 0 })).value.n = total;
  }
  inc(labels: Labels = {}, by = 1): void {
    if (by < 0) throw new Error(`counter ${this.name}: cannot decrease (inc by ${by})`);
    this.entry(labels, () => ({ n: 0 })).value.n += by;
  }
  /** The series of `labels`, looked up once: for a hot path that counts the same series often. */
  bind(labels: Labels): { inc(by?: number): void } {
    const e = this.entry(labels, () => ({ n: 0 })).value;
    return {
      inc: (by = 1) => {
        if (by < 0) throw new Error(`counter ${this.name}: cannot decrease (inc by ${by})`);
        e.n += by;
      },
    };
  }
  /** Current value (0 for a series never incremented). */
  get(labels: Labels = {}): number {
    return this.entry(labels, () => ({ n: 0 })).value.n;
  }
  render(): string[] {
    this.collect?.();
    return [...this.series.values()].map(
      (s) => `${this.name}${labelText(this.labelNames, s.values)} ${formatNumber(s.value.n)}`,
    );
  }
}

/** A value that goes up and down, or is computed when scraped (`collect`). */
export class Gauge extends Labelled<{ n: number }> {
  readonly kind = "gauge";
  collect: (() => void) | undefined;
  set(labels: Labels, value: number): void {
    this.entry(labels, () => ({ n: 0 })).value.n = value;
  }
  render(): string[] {
    this.collect?.();
    return [...this.series.values()].map(
      (s) => `${this.name}${labelText(this.labelNames, s.values)} ${formatNumber(s.value.n)}`,
    );
  }
}

/** Observations counted into cumulative buckets, with their sum and count. */
export class Histogram extends Labelled<{ buckets: number[]; sum: number; count: number }> {
  readonly kind = "histogram";
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    readonly buckets: readonly number[] = DEFAULT_BUCKETS,
  ) {
    super(name, help, labelNames);
  }
  observe(labels: Labels, value: number): void {
    this.#add(this.#series(labels), value);
  }
  /** The series of `labels`, looked up once (see `Counter.bind`). */
  bind(labels: Labels): { observe(value: number): void } {
    const e = this.#series(labels);
    return { observe: (value) => this.#add(e, value) };
  }
  #series(labels: Labels): { buckets: number[]; sum: number; count: number } {
    return this.entry(labels, () => ({ buckets: this.buckets.map(() => 0), sum: 0, count: 0 })).value;
  }
  #add(e: { buckets: number[]; sum: number; count: number }, value: number): void {
    const buckets = this.buckets;
    for (let i = 0; i < buckets.length; i++) if (value <= buckets[i]!) e.buckets[i]! += 1;
    e.sum += value;
    e.count += 1;
  }
  render(): string[] {
    const lines: string[] = [];
    for (const s of this.series.values()) {
      this.buckets.forEach((le, i) => {
        const l = labelText(this.labelNames, s.values, `le="${formatNumber(le)}"`);
        lines.push(`${this.name}_bucket${l} ${s.value.buckets[i]}`);
      });
      lines.push(`${this.name}_bucket${labelText(this.labelNames, s.values, 'le="+Inf"')} ${s.value.count}`);
      lines.push(`${this.name}_sum${labelText(this.labelNames, s.values)} ${formatNumber(s.value.sum)}`);
      lines.push(`${this.name}_count${labelText(this.labelNames, s.values)} ${s.value.count}`);
    }
    return lines;
  }
}

/**
 * Holds metrics by name and renders them all for `GET /metrics`.
 *
 * @example
 * ```ts
 * const registry = new MetricsRegistry();
 * const sent = registry.counter("bothost_things_total", "Things done.", ["bot"]);
 * sent.inc({ bot: "echo" });
 * registry.render(); // "# HELP bothost_things_total Things done.\n# TYPE …"
 * ```
 */
export class MetricsRegistry {
  readonly #metrics = new Map<string, Metric>();

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.#add(new Counter(name, help, labelNames));
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.#add(new Gauge(name, help, labelNames));
  }

  histogram(name: string, help: string, labelNames: readonly string[] = [], buckets?: number[]): Histogram {
    return this.#add(new Histogram(name, help, labelNames, buckets));
  }

  /** Every metric in the text exposition format, metrics in registration order. */
  render(): string {
    const out: string[] = [];
    for (const m of this.#metrics.values()) {
      out.push(`# HELP ${m.name} ${m.help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}`);
      out.push(`# TYPE ${m.name} ${m.kind}`);
      out.push(...m.render());
    }
    return `${out.join("\n")}\n`;
  }

  #add<M extends Metric & { labelNames: readonly string[] }>(metric: M): M {
    if (!NAME.test(metric.name)) throw new Error(`metric name "${metric.name}" is not valid`);
    for (const l of metric.labelNames) {
      if (!LABEL.test(l) || l === "le") throw new Error(`metric ${metric.name}: label "${l}" is not valid`);
    }
    const existing = this.#metrics.get(metric.name);
    if (existing) {
      if (existing.kind !== metric.kind)
        throw new Error(`metric ${metric.name} exists already as a ${existing.kind}`);
      return existing as M;
    }
    this.#metrics.set(metric.name, metric);
    return metric;
  }
}

/** The text format's content type, for the `/metrics` response. */
export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
