/** A stream that keeps each line written to it: where a test's logger writes, to read the lines back. */
import { Writable } from "node:stream";

export function logSink(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split("\n").filter(Boolean));
      done();
    },
  });
  return { stream, lines };
}
