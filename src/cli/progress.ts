/**
 * A one-line progress bar on a terminal: redrawn in place at most every 100 ms, erased when done.
 * On anything but a terminal (a pipe, a file) it draws nothing, so piped output stays clean.
 */

const WIDTH = 30;
const EVERY_MS = 100;

export interface ProgressBar {
  /** A line of text in place of the bar (a phase without a known total). */
  note(text: string): void;
  update(done: number, total: number): void;
  /** Erase the line. */
  done(): void;
}

export function progressBar(stream: NodeJS.WriteStream): ProgressBar {
  if (!stream.isTTY) return { note() {}, update() {}, done() {} };
  let last = 0;
  let drawn = false;
  const draw = (line: string, force: boolean) => {
    const now = Date.now();
    if (!force && now - last < EVERY_MS) return;
    last = now;
    drawn = true;
    stream.write(`\r\x1b[K${line.slice(0, Math.max(10, (stream.columns || 80) - 1))}`);
  };
  return {
    note: (text) => draw(text, false),
    update(done, total) {
      const filled = total > 0 ? Math.round((done / total) * WIDTH) : WIDTH;
      const bar = `${"█".repeat(filled)}${"░".repeat(WIDTH - filled)}`;
      draw(`${bar} ${done}/${total} messages`, done === total);
    },
    done() {
      if (drawn) stream.write("\r\x1b[K");
    },
  };
}
