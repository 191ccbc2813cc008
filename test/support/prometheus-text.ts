/**
 * A strict parser of the Prometheus text format (0.0.4), for tests: every sample must belong to
 * a family declared with # TYPE, label syntax must be exact, histograms must be cumulative.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: string;
  help: string;
  samples: Sample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/y;

function parseLabels(text: string, line: string): Record<string, string> {
  const out: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const start = LABEL.lastIndex;
    const m = LABEL.exec(text);
    if (!m || m.index !== start) throw new Error(`bad labels in: ${line}`);
    out[m[1]!] = m[2]!.replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
  }
  return out;
}

/** As Prometheus reads values (Go's ParseFloat): Inf and NaN in any case (prom-client writes "Nan"). */
function parseValue(text: string, line: string): number {
  const word = text.toLowerCase();
  if (word === "+inf" || word === "inf") return Number.POSITIVE_INFINITY;
  if (word === "-inf") return Number.NEGATIVE_INFINITY;
  if (word === "nan") return Number.NaN;
  const n = Number(text);
  if (text === "" || Number.isNaN(n)) throw new Error(`bad value in: ${line}`);
  return n;
}

function familyOf(sample: string, families: Map<string, Family>): Family | undefined {
  const direct = families.get(sample);
  if (direct) return direct;
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    if (!sample.endsWith(suffix)) continue;
    const f = families.get(sample.slice(0, -suffix.length));
    if (f?.type === "histogram") return f;
  }
  return undefined;
}

export function parsePrometheus(text: string): Map<string, Family> {
  if (!text.endsWith("\n")) throw new Error("the exposition must end with a line feed");
  const families = new Map<string, Family>();
  let help = new Map<string, string>();
  for (const line of text.slice(0, -1).split("\n")) {
    if (line.startsWith("# HELP ")) {
      const [name, ...rest] = line.slice(7).split(" ");
      help = new Map(help).set(name!, rest.join(" "));
      continue;
    }
    if (line.startsWith("# TYPE ")) {
      const [name, type] = line.slice(7).split(" ");
      if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(type!))
        throw new Error(`bad type: ${line}`);
      if (families.has(name!)) throw new Error(`family declared twice: ${name}`);
      families.set(name!, { name: name!, type: type!, help: help.get(name!) ?? "", samples: [] });
      continue;
    }
    if (line === "" || line.startsWith("#")) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const family = familyOf(m[1]!, families);
    if (!family) throw new Error(`sample without a # TYPE: ${line}`);
    family.samples.push({
      name: m[1]!,
      labels: m[3] ? parseLabels(m[3], line) : {},
      value: parseValue(m[4]!, line),
    });
  }
  for (const f of families.values()) if (f.type === "histogram") checkHistogram(f);
  return families;
}

function checkHistogram(f: Family): void {
  const series = new Map<string, Sample[]>();
  for (const s of f.samples.filter((x) => x.name === `${f.name}_bucket`)) {
    const { le, ...rest } = s.labels;
    if (le === undefined) throw new Error(`${f.name}: bucket without le`);
    const key = JSON.stringify(rest);
    series.set(key, [...(series.get(key) ?? []), s]);
  }
  for (const [key, buckets] of series) {
    for (let i = 1; i < buckets.length; i++) {
      if (buckets[i]!.value < buckets[i - 1]!.value)
        throw new Error(`${f.name}${key}: buckets not cumulative`);
    }
    const inf = buckets.at(-1)!;
    if (inf.labels.le !== "+Inf") throw new Error(`${f.name}${key}: last bucket is not +Inf`);
    const count = f.samples.find((s) => s.name === `${f.name}_count` && JSON.stringify(s.labels) === key);
    if (count?.value !== inf.value) throw new Error(`${f.name}${key}: _count differs from the +Inf bucket`);
  }
}

/** The value of one series (0 when absent, as a counter never incremented). */
export function sampleValue(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string>,
): number {
  const family = familyOf(name, families);
  const s = family?.samples.find(
    (x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v),
  );
  return s?.value ?? 0;
}
