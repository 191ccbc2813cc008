/** A stream of chunks a test pushes into a handler's `progress.stream(...)`, and ends. */
export class Feed implements AsyncIterable<string> {
  readonly #queued: string[] = [];
  #ended = false;
  #wake: (() => void) | undefined;

  push(...chunks: string[]): void {
    this.#queued.push(...chunks);
    this.#wake?.();
  }

  end(): void {
    this.#ended = true;
    this.#wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    for (;;) {
      const next = this.#queued.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.#ended) return;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
      this.#wake = undefined;
    }
  }
}

/** `n` numbered lines of `width` characters each (a line break after each). */
export function lines(n: number, width = 99, from = 0): string[] {
  return Array.from({ length: n }, (_, i) => `${`line ${from + i} `.padEnd(width, "x")}\n`);
}
