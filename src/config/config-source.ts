/**
 * Where each value of a loaded config came from: file, line, column, and the variables behind it.
 */
import path from "node:path";
import type { LineCounter } from "yaml";
import { type ConfigPath, type ConfigProblem, formatPath } from "./config-problem.ts";
import { recordKey, type SourceRecord } from "./yaml-to-value.ts";

export interface ConfigLocation {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

/** Finds config values in the file, so problems found later (e.g. in a bot's settings) point at it. */
export class ConfigSource {
  readonly path: string;
  /** The folder relative paths in the config start from. */
  readonly dir: string;
  /** The file as shown in messages: relative to the working directory when inside it. */
  readonly displayFile: string;
  readonly #records: ReadonlyMap<string, SourceRecord>;
  readonly #lines: LineCounter | undefined;

  constructor(
    file: string,
    options: { cwd: string; records?: ReadonlyMap<string, SourceRecord>; lineCounter?: LineCounter },
  ) {
    this.path = path.resolve(options.cwd, file);
    this.dir = path.dirname(this.path);
    this.displayFile = displayPath(this.path, options.cwd);
    this.#records = options.records ?? new Map();
    this.#lines = options.lineCounter;
  }

  /**
   * The location of a value, or of its key with `at: "key"`. A path that is not in the file (a
   * missing key) gets the location of the nearest mapping entry that is.
   */
  locate(at: ConfigPath, prefer: "value" | "key" = "value"): ConfigLocation {
    for (let i = at.length; i >= 0; i--) {
      const record = this.#records.get(recordKey(at.slice(0, i)));
      if (record === undefined) continue;
      const offset = i === at.length && prefer === "value" ? record.value : (record.key ?? record.value);
      return this.locateOffset(offset);
    }
    return this.locateOffset(0);
  }

  /** The location of a character offset of the file. */
  locateOffset(offset: number): ConfigLocation {
    if (this.#lines === undefined) return { file: this.displayFile, line: 1, column: 1 };
    const { line, col } = this.#lines.linePos(offset);
    return { file: this.displayFile, line, column: col };
  }

  /** A problem at a value (or its key), mentioning the variables its value came from. */
  problem(at: ConfigPath, message: string, prefer: "value" | "key" = "value"): ConfigProblem {
    const variables = (prefer === "value" && this.#records.get(recordKey(at))?.variables) || [];
    const from =
      variables.length === 0 ? "" : ` (the value comes from ${variables.map((v) => "$" + v).join(", ")})`;
    return { ...this.locate(at, prefer), path: formatPath(at), message: message + from };
  }
}

/** A path relative to `cwd` when inside it, else absolute. */
export function displayPath(absolute: string, cwd: string): string {
  const relative = path.relative(cwd, absolute);
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative) ? relative : absolute;
}
