/** The delivery ledger's marks as the store holds them: sorted ids as runs in one string. */

/**
 * Ids added in increasing order, written as runs in one string: 3,4,5,9,10,20 → "3-5,9-10,20".
 * A string rather than an array of pairs: the store validates and serializes an array element
 * by element, one small array per run, at every save of a wave.
 */
export class RunsText {
  #text = "";
  #from = Number.NaN;
  #to = Number.NaN;

  add(id: number): void {
    if (id === this.#to + 1) {
      this.#to = id;
      return;
    }
    this.#close();
    this.#from = this.#to = id;
  }

  /** The runs so far ("" for none). */
  text(): string {
    this.#close();
    return this.#text;
  }

  #close(): void {
    if (Number.isNaN(this.#from)) return;
    const run = this.#from === this.#to ? `${this.#from}` : `${this.#from}-${this.#to}`;
    this.#text = this.#text === "" ? run : `${this.#text},${run}`;
    this.#from = this.#to = Number.NaN;
  }
}

/** The runs stored under `finished`, ignoring anything malformed. */
export function rangesIn(value: unknown): [number, number][] {
  if (typeof value !== "string" || value === "") return [];
  const ranges: [number, number][] = [];
  for (const run of value.split(",")) {
    const [from, to = from] = run.split("-").map(Number);
    if (Number.isSafeInteger(from) && Number.isSafeInteger(to) && (from as number) <= (to as number)) {
      ranges.push([from as number, to as number]);
    }
  }
  return ranges;
}
