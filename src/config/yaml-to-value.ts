// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings show users the ${VAR} syntax.
/**
 * A YAML document → plain data, with interpolation, limits against hostile input, and a record of
 * where each value came from so every later problem can point at a line and column.
 */
import {
  type Document,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  type Pair,
  parseAllDocuments,
  Scalar,
  type YAMLError,
} from "yaml";
import { isSecretPath } from "./secrets.ts";

type Path = readonly (string | number)[];

/** Where a value sits in the text, and the variables it was built from. */
export interface SourceRecord {
  /** Offset of the value (of the key's colon line when the value is empty). */
  readonly value: number;
  /** Offset of the key, for mapping entries. */
  readonly key?: number;
  /** Environment variables interpolated into this value. */
  readonly variables?: readonly string[];
}

/** Limits that keep a hostile file from exhausting memory or the stack. */
export const yamlLimits = {
  /** Deepest nesting of mappings and lists. */
  maxDepth: 64,
  /** Most values after expanding aliases (a billion-laughs file expands exponentially). */
  maxNodes: 100_000,
} as const;

const PLAIN_TAGS = new Set(
  ["str", "int", "float", "bool", "null", "map", "seq"].map((t) => `tag:yaml.org,2002:${t}`),
);

/** The key of a path in {@link Converted.records}. */
export const recordKey = (path: Path): string => JSON.stringify(path);

class TooLarge extends Error {}

/**
 * Converts a parsed document to plain objects, arrays and scalars, with where each path came from,
 * what is wrong, and the secret values seen on the way.
 *
 * Strings are interpolated from `env` (see {@link interpolate}); an unquoted scalar that contained
 * `${…}` is then typed as YAML would type the result, so `port: ${PORT}` gives a number.
 */
export function documentToValue(
  doc: Document,
  env: Readonly<Record<string, string | undefined>>,
  lineOf: (offset: number) => number,
) {
  const records = new Map<string, SourceRecord>();
  const problems: OffsetProblem[] = [];
  const secrets: string[] = [];
  const active = new Set<Node>();
  let nodes = 0;
  let depthReported = false;

  // Notes a problem (once per place and message); returns the null that stands for the value.
  const problem = (offset: number, path: Path, message: string): null => {
    if (!problems.some((p) => p.offset === offset && p.message === message))
      problems.push({ offset, path, message });
    return null;
  };

  const walk = (node: unknown, path: Path, depth: number, record: boolean): unknown => {
    if (node === null || node === undefined) return null;
    if (++nodes > yamlLimits.maxNodes) throw new TooLarge();
    const n = node as Node;
    const offset = n.range?.[0] ?? 0;
    if (depth > yamlLimits.maxDepth) {
      if (depthReported) return null;
      depthReported = true;
      return problem(offset, path, `nests deeper than ${yamlLimits.maxDepth} levels: flatten it`);
    }
    if (isAlias(n)) {
      const target = n.resolve(doc);
      if (target === undefined) {
        return problem(
          offset,
          path,
          `uses alias *${n.source}, but no &${n.source} anchor comes before it: define the anchor first`,
        );
      }
      if (active.has(target)) {
        return problem(
          offset,
          path,
          `alias *${n.source} refers to a value that contains it: aliases cannot be circular`,
        );
      }
      return walk(target, path, depth + 1, record);
    }
    if (n.tag !== undefined && !PLAIN_TAGS.has(n.tag)) {
      const tag = n.tag.replace(/^tag:yaml\.org,2002:/, "!!");
      return problem(
        offset,
        path,
        `has the tag ${tag}, which bothost does not support: config files are plain data; remove the tag`,
      );
    }
    active.add(n);
    try {
      if (isScalar(n)) return scalar(n, offset, path, record);
      if (isMap(n)) return mapping(n.items as Pair[], path, depth, record);
      if (isSeq(n)) {
        return n.items.map((item, i) => {
          const at = [...path, i];
          if (record) records.set(recordKey(at), { value: (item as Node | null)?.range?.[0] ?? offset });
          return walk(item, at, depth + 1, record);
        });
      }
      return problem(offset, path, "is not plain YAML data: use mappings, lists and plain values");
    } finally {
      active.delete(n);
    }
  };

  const scalar = (n: Scalar, offset: number, path: Path, record: boolean): unknown => {
    let value: unknown = n.value;
    if (typeof value === "string" && value.includes("${")) {
      const result = interpolate(value, env);
      for (const message of result.problems) problem(offset, path, message);
      if (result.variables.length > 0) {
        const key = recordKey(path);
        const existing = records.get(key);
        if (record && existing) records.set(key, { ...existing, variables: result.variables });
        if (isSecretPath(path)) for (const name of result.variables) if (env[name]) secrets.push(env[name]);
      }
      value = n.type === Scalar.PLAIN ? retype(result.value) : result.value;
    }
    if (typeof value === "string" && isSecretPath(path)) secrets.push(value);
    if (value !== null && !["string", "number", "boolean"].includes(typeof value)) {
      return problem(offset, path, "is not a plain value: use text, a number, true/false or nothing");
    }
    return value;
  };

  const mapping = (pairs: Pair[], path: Path, depth: number, record: boolean): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    const first = new Map<string, number>();
    const merges: { node: unknown; offset: number }[] = [];
    for (const pair of pairs) {
      const keyNode = pair.key as Node | null;
      const keyOffset = keyNode?.range?.[0] ?? 0;
      const valueOffset = (pair.value as Node | null)?.range?.[0] ?? keyOffset;
      const key = keyText(keyNode);
      if (key === undefined) {
        problem(keyOffset, path, "has a key that is not plain text: write keys as words, like name: value");
        continue;
      }
      if (key === "<<" && isScalar(keyNode) && keyNode.type === Scalar.PLAIN) {
        merges.push({ node: pair.value, offset: valueOffset });
        continue;
      }
      const at = [...path, key];
      if (key === "__proto__") {
        problem(
          keyOffset,
          at,
          'is a key bothost refuses ("__proto__" could change how every object behaves): rename it',
        );
        continue;
      }
      const firstOffset = first.get(key);
      if (firstOffset !== undefined) {
        problem(keyOffset, at, `is set twice (also on line ${lineOf(firstOffset)}): keep one of them`);
        continue;
      }
      first.set(key, keyOffset);
      if (record) records.set(recordKey(at), { value: valueOffset, key: keyOffset });
      out[key] = walk(pair.value, at, depth + 1, record);
    }
    // Merge keys (<<: *defaults): entries written in this mapping win, then earlier sources.
    for (const merge of merges) {
      const sources = isSeq(merge.node) ? merge.node.items : [merge.node];
      for (const source of sources) {
        const value = walk(source, path, depth + 1, false);
        if (value === null || typeof value !== "object" || Array.isArray(value)) {
          problem(
            merge.offset,
            path,
            "merges (<<) something that is not a mapping: merge an alias of a mapping, like <<: *defaults",
          );
          continue;
        }
        for (const [key, item] of Object.entries(value)) {
          if (Object.hasOwn(out, key)) continue;
          out[key] = item;
          if (record) records.set(recordKey([...path, key]), { value: merge.offset, key: merge.offset });
        }
      }
    }
    return out;
  };

  let value: unknown;
  try {
    value = walk(doc.contents, [], 0, true);
  } catch (err) {
    if (!(err instanceof TooLarge)) throw err;
    problems.push({
      offset: 0,
      path: [],
      message: `expands to more than ${yamlLimits.maxNodes} values through aliases (a "billion laughs" file?): use fewer aliases`,
    });
    value = undefined;
  }
  records.set(recordKey([]), { value: (doc.contents as Node | null)?.range?.[0] ?? 0 });
  return { value, records, problems, secrets };
}

function keyText(node: Node | null): string | undefined {
  const value = isScalar(node) ? node.value : undefined;
  return typeof value === "string" || typeof value === "number" ? String(value) : undefined;
}

// How YAML's core schema types an unquoted scalar; only the types a config can use.
function retype(text: string): unknown {
  if (/^(?:true|True|TRUE)$/.test(text)) return true;
  if (/^(?:false|False|FALSE)$/.test(text)) return false;
  if (/^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/.test(text)) return Number(text);
  return text;
}

/** A problem found at a character offset of the config text. */
export interface OffsetProblem {
  readonly offset: number;
  readonly path: readonly (string | number)[];
  readonly message: string;
}

const FIX: Record<string, string> = {
  TAB_AS_INDENT: "indent with spaces, not tabs",
  BAD_INDENT: "line up entries of the same mapping or list at the same column, with spaces",
  MISSING_CHAR: "add the missing character",
  MULTILINE_IMPLICIT_KEY: "a key and its colon must be on one line; check the indentation and quotes above",
  UNEXPECTED_TOKEN: "remove it, or put the value in quotes",
  BLOCK_AS_IMPLICIT_KEY: "check the indentation",
  BAD_DQ_ESCAPE: "write a backslash as \\\\ inside double quotes, or use single quotes",
  BAD_SCALAR_START: "put the value in quotes",
  RESOURCE_EXHAUSTION: "the document nests too deeply; flatten it",
  BAD_ALIAS: "give the anchor or alias a name",
  MULTIPLE_ANCHORS: "keep one anchor",
  MULTIPLE_TAGS: "remove the tags",
};

/**
 * Parses config text: the document (absent when the text holds none) and what is wrong with it.
 * Duplicate keys and tags are left to the tree walk, which can say which key.
 */
export function parseConfigYaml(text: string) {
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, {
    lineCounter,
    prettyErrors: false,
    uniqueKeys: false,
    schema: "core",
    strict: true,
  });
  // parseAllDocuments returns an EmptyStream (not an array) for text with no document at all.
  const list = Array.isArray(docs) ? docs : [];
  const problems: OffsetProblem[] = [];
  const doc = list[0];
  if (doc === undefined || (doc.contents === null && doc.errors.length === 0 && list.length === 1)) {
    problems.push({
      offset: 0,
      path: [],
      message: "the file is empty: write at least a server and a bots mapping (see config.example.yaml)",
    });
    return { doc: undefined, lineCounter, problems };
  }
  for (const error of [...doc.errors, ...doc.warnings]) {
    if (error.code !== "TAG_RESOLVE_FAILED") problems.push(syntaxProblem(error, text));
  }
  const second = list[1];
  if (second !== undefined) {
    problems.push({
      offset: second.range[0],
      path: [],
      message:
        "a second YAML document starts here: a config file holds one document; remove this --- and what follows, or merge it into the first",
    });
  }
  return { doc, lineCounter, problems: dedupe(problems) };
}

function syntaxProblem(error: YAMLError, text: string): OffsetProblem {
  const first = (error.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "");
  const what = error.code === "RESOURCE_EXHAUSTION" ? "too deeply nested" : first.replace(/\.$/, "");
  const fix = FIX[error.code] ?? "fix the YAML syntax here";
  if (error.code === "BAD_INDENT") {
    const entry = misplacedEntry(text, error.pos[0]);
    if (entry)
      return {
        offset: entry.offset,
        path: [],
        message: `YAML syntax error: ${entry.name} is not lined up with the entries before it: ${fix}`,
      };
  }
  return { offset: error.pos[0], path: [], message: `YAML syntax error: ${what}: ${fix}` };
}

/**
 * The entry a parser's "not at the same column" points at the start of its line for: where its
 * text starts (past the indentation) and its key, `"email"`, or `a list item`.
 */
function misplacedEntry(text: string, offset: number): { offset: number; name: string } | undefined {
  const end = text.indexOf("\n", offset);
  const line = /^ +(- |[^\s:#][^:#]*?:(?:\s|$))/.exec(text.slice(offset, end === -1 ? undefined : end));
  if (!line?.[1]) return undefined;
  const start = offset + line[0].length - line[1].length;
  const name = line[1] === "- " ? "a list item" : `"${line[1].replace(/:\s*$/, "").trim()}"`;
  return { offset: start, name };
}

// One mistake often trips several parser checks at the same spot; the first says it best.
function dedupe(problems: OffsetProblem[]): OffsetProblem[] {
  return problems.filter((p, i) => problems.findIndex((q) => q.offset === p.offset) === i);
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const WITH_DEFAULT = /^([A-Za-z_][A-Za-z0-9_]*):-(.*)$/s;
const OTHER_FORM = /^[A-Za-z_][A-Za-z0-9_]*(?::?[-?+=])/;

/**
 * Replaces `${VAR}` and `${VAR:-default}` with values from `env`, in one pass.
 *
 * Substituted values are never scanned again, so a value that itself contains `${…}` stays as it
 * is. `$${` is a literal `${`. `:-` uses the default when the variable is unset or empty. Messages
 * name variables (in `variables`, in order) but never contain their values.
 */
export function interpolate(text: string, env: Readonly<Record<string, string | undefined>>) {
  const variables: string[] = [];
  const problems: string[] = [];
  const value = text.replace(
    /\$\$\{|\$\{([^}]*)(\}?)/g,
    (match, inner: string | undefined, close: string) => {
      if (inner === undefined) return "${";
      if (close === "") {
        problems.push("has a ${ without a closing }: close it, or write $${ for a literal ${");
        return match;
      }
      const withDefault = WITH_DEFAULT.exec(inner);
      const name = withDefault ? withDefault[1]! : inner;
      const fallback = withDefault?.[2];
      if (!NAME.test(name)) {
        problems.push(
          OTHER_FORM.test(inner)
            ? "uses an unsupported ${…} form: only ${NAME} and ${NAME:-default} are supported"
            : "has a ${…} that is not a variable name: names are letters, digits and _, not starting with a digit (write $${ for a literal ${)",
        );
        return "";
      }
      if (fallback?.includes("${")) {
        problems.push(`nests a \${…} inside the default of ${name}: defaults are plain text`);
        return "";
      }
      variables.push(name);
      const set = env[name];
      if (set !== undefined && !(set === "" && fallback !== undefined)) return set;
      if (fallback !== undefined) return fallback;
      problems.push(
        `environment variable ${name} is not set: set it before starting bothost, or write \${${name}:-default} to give a default`,
      );
      return "";
    },
  );
  return { value, variables, problems };
}
