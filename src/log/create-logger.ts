/**
 * The daemon's logger: pino JSON lines, or a readable form on a terminal, with secrets redacted:
 * the values of keys named like a secret (src/log/redact-line.ts), and the values given to
 * {@link hideInLog} wherever they are quoted (src/log/hidden-values.ts).
 */

import { createRequire } from "node:module";
import { type DestinationStream, type Logger, type LoggerOptions, pino } from "pino";
import type PinoPretty from "pino-pretty";
import { HiddenValues } from "./hidden-values.ts";
import { redactLine } from "./redact-line.ts";
import { serializeError } from "./serialize-error.ts";

export interface LoggerSettings {
  /** trace | debug | info | warn | error | fatal | silent. Default `info`. */
  level?: string;
  /** `true` readable lines, `false` JSON lines, `"auto"` readable when stdout is a terminal. */
  pretty?: boolean | "auto";
  /** Where lines go (default stdout). Tests pass a stream to read the lines back. */
  destination?: DestinationStream;
}

/** The values each logger made here hides (its children write through its hook). */
const hiddenIn = new WeakMap<Logger, HiddenValues>();

/**
 * Hides `values` (the config's secrets) from every line `log` and its children write from now on,
 * besides those hidden before. A logger not made by {@link createLogger} is left as it is.
 */
export function hideInLog(log: Logger, values: Iterable<string>): void {
  hiddenIn.get(log)?.add(values);
}

export function createLogger(settings: LoggerSettings = {}): Logger {
  const hidden = new HiddenValues();
  const options: LoggerOptions = {
    level: settings.level ?? "info",
    base: { pid: process.pid },
    // On the finished line rather than pino's redact paths, which copied the object of every line
    // (several KB per line) to look for secrets that are almost never there.
    hooks: { streamWrite: (line) => hidden.redact(redactLine(line)) },
    serializers: { err: serializeError },
  };
  const wantPretty =
    settings.pretty === true || (settings.pretty !== false && !settings.destination && process.stdout.isTTY);
  if (wantPretty) {
    // Loaded only for readable output: a daemon logging JSON lines never loads it.
    const pretty = createRequire(import.meta.url)("pino-pretty") as typeof PinoPretty;
    const stream = pretty({
      colorize: process.stdout.isTTY === true,
      ignore: "pid,hostname",
      translateTime: "SYS:HH:MM:ss.l",
      destination: settings.destination ?? stdoutSink(),
    });
    return hiding(pino(options, stream), hidden);
  }
  return hiding(pino(options, settings.destination ?? stdoutSink()), hidden);
}

function hiding(log: Logger, hidden: HiddenValues): Logger {
  hiddenIn.set(log, hidden);
  return log;
}

/**
 * Standard output, written synchronously (no line is lost when the process exits), that drops
 * lines once the output is gone: a terminal that hung up (EIO), a closed pipe (EPIPE), a full
 * disk (ENOSPC). pino's own stream retries such a write every 100 ms for ever when it flushes at
 * exit, which left a daemon stuck and deaf to SIGTERM; this one keeps the daemon running.
 */
function stdoutSink(): DestinationStream {
  const out = pino.destination({ dest: 1, sync: true });
  out.on("error", () => {
    out.write = () => true;
    out.flushSync = () => {};
    out.end = () => {};
  });
  return out;
}
