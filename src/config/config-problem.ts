/**
 * One thing wrong with a config file and where it is, and how problems and paths are written in
 * messages.
 */

/** A path into the config document: mapping keys and list indices. */
export type ConfigPath = readonly (string | number)[];

/** One thing wrong with a config file, where it is, and how to fix it. */
export interface ConfigProblem {
  /** The config file, relative to the working directory when inside it. */
  readonly file: string;
  /** 1-based line; 0 when the problem concerns the whole file (e.g. it cannot be read). */
  readonly line: number;
  /** 1-based column; 0 when `line` is 0. */
  readonly column: number;
  /** The field, as written in messages: `bots.moderator.narrow[0][1]`; `""` for the whole document. */
  readonly path: string;
  /** What is wrong and how to fix it. Never contains a secret. */
  readonly message: string;
}

/** A path as users see it in messages: `bots.moderator.narrow[0][1]`. */
export function formatPath(path: ConfigPath): string {
  // A hostile file can nest hundreds of levels; the start and the end say where.
  const shown = path.length > 12 ? [...path.slice(0, 8), "…", ...path.slice(-2)] : path;
  let out = "";
  for (const segment of shown) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (segment === "…" && shown !== path) out += "…";
    else if (/^[A-Za-z0-9_-]+$/.test(segment)) out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/** One line per problem: `file:line:column path: message` (position and path left out when absent). */
export function formatProblems(problems: readonly ConfigProblem[]): string {
  return problems
    .map((p) => {
      const where = p.line > 0 ? `${p.file}:${p.line}:${p.column}` : `${p.file}:`;
      return p.path === "" ? `${where} ${p.message}` : `${where} ${p.path}: ${p.message}`;
    })
    .join("\n");
}
