/**
 * YAML text → one document with source positions, or problems saying what is wrong with the text.
 */
import { type Document, LineCounter, parseAllDocuments, type YAMLError } from "yaml";

/** A problem found at a character offset of the config text. */
export interface OffsetProblem {
  readonly offset: number;
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/** The parsed document (absent when the text holds none) and what is wrong with the text. */
export interface ParsedYaml {
  readonly doc: Document | undefined;
  readonly lineCounter: LineCounter;
  readonly problems: readonly OffsetProblem[];
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
 * Parses config text. Duplicate keys and tags are left to the tree walk, which can say which key.
 *
 * @example
 * ```ts
 * const { doc, lineCounter, problems } = parseConfigYaml("server:\n  url: sandbox\n");
 * ```
 */
export function parseConfigYaml(text: string): ParsedYaml {
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
    if (error.code !== "TAG_RESOLVE_FAILED") problems.push(syntaxProblem(error));
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

function syntaxProblem(error: YAMLError): OffsetProblem {
  const first = (error.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "");
  const what = error.code === "RESOURCE_EXHAUSTION" ? "too deeply nested" : first.replace(/\.$/, "");
  const fix = FIX[error.code] ?? "fix the YAML syntax here";
  return { offset: error.pos[0], path: [], message: `YAML syntax error: ${what}: ${fix}` };
}

// One mistake often trips several parser checks at the same spot; the first says it best.
function dedupe(problems: OffsetProblem[]): OffsetProblem[] {
  const seen = new Set<number>();
  return problems.filter((p) => {
    if (seen.has(p.offset)) return false;
    seen.add(p.offset);
    return true;
  });
}
