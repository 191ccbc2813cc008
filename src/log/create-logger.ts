/**
 * The daemon's logger: pino JSON lines, or a readable form on a terminal, with secrets redacted.
 */

import { createRequire } from "node:module";
import { type DestinationStream, type Logger, type LoggerOptions, pino } from "pino";
import type PinoPretty from "pino-pretty";

/** Keys whose values are secrets wherever they appear (top level or one object deep). */
const secretKeys = [
  "api_key",
  "apiKey",
  "key",
  "token",
  "secret",
  "password",
  "authorization",
  "Authorization",
  "webhook_secret",
];

/** pino redact paths covering each secret key at the top level and one and two levels deep. */
export const redactPaths: string[] = secretKeys.flatMap((k) => [k, `*.${k}`, `*.*.${k}`]);

export interface LoggerSettings {
  /** trace | debug | info | warn | error | fatal | silent. Default `info`. */
  level?: string;
  /** `true` readable lines, `false` JSON lines, `"auto"` readable when stdout is a terminal. */
  pretty?: boolean | "auto";
  /** Where lines go (default stdout). Tests pass a stream to read the lines back. */
  destination?: DestinationStream;
}

export function createLogger(settings: LoggerSettings = {}): Logger {
  const options: LoggerOptions = {
    level: settings.level ?? "info",
    base: { pid: process.pid },
    redact: { paths: redactPaths, censor: "[redacted]" },
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
      destination: settings.destination ?? 1,
      sync: true,
    });
    return pino(options, stream);
  }
  return settings.destination ? pino(options, settings.destination) : pino(options);
}
