/**
 * Checks sandbox response bodies against the server's API description, when it is present beside
 * the project (../shared/zulip-api/openapi.yaml). The parsed spec is cached in the OS temp dir.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import type { ResponseRecord } from "../../../src/sandbox/types.ts";
import { type Schema, SchemaChecker } from "./schema-check.ts";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const SPEC_PATH = path.resolve(repoRoot, "../shared/zulip-api/openapi.yaml");

interface Spec {
  paths: Record<string, Record<string, { responses?: Record<string, Schema> }>>;
  components: { schemas: Record<string, Schema>; responses: Record<string, Schema> };
}

let cached: Spec | null | undefined;

export function loadSpec(): Spec | null {
  if (cached !== undefined) return cached;
  cached = existsSync(SPEC_PATH) ? readSpec(SPEC_PATH, tmpdir()) : null;
  return cached;
}

/** The cache file of the spec at `specPath` in `cacheDir`: named by the spec's size and time. */
export function cacheFileOf(specPath: string, cacheDir: string): string {
  const st = statSync(specPath);
  return path.join(cacheDir, `bothost-openapi-${st.size}-${Math.floor(st.mtimeMs)}.json`);
}

/**
 * The spec at `specPath`, parsed, through its cache file in `cacheDir`, which test files on other
 * workers read and write at the same time: a writer writes a file of its own and renames it into
 * place, so a reader never sees one half written; a cache file that does not parse is parsed anew
 * and replaced.
 */
export function readSpec(specPath: string, cacheDir: string): Spec {
  const cacheFile = cacheFileOf(specPath, cacheDir);
  try {
    return JSON.parse(readFileSync(cacheFile, "utf8")) as Spec;
  } catch {
    const spec = parse(readFileSync(specPath, "utf8")) as Spec;
    const own = `${cacheFile}.${process.pid}-${randomBytes(4).toString("hex")}`;
    writeFileSync(own, JSON.stringify(spec));
    renameSync(own, cacheFile);
    return spec;
  }
}

export interface ShapeReport {
  checked: number;
  endpoints: Set<string>;
  undocumented: number;
  failures: string[];
}

/**
 * Fields the real server sends that this copy of the spec (about FL 420) does not list: newer
 * ones (is_imported_stub FL 433, server_report_message_types FL 435, realm_uuid FL 466, the
 * web_inbox_show_channel_folders setting) and local_message_id, which the server adds to the
 * sender's message event but the spec never documented (see docs/internals/server-behaviour.md#event-shapes).
 */
const NOT_IN_SPEC = new Set([
  "is_imported_stub",
  "server_report_message_types",
  "realm_uuid",
  "web_inbox_show_channel_folders",
  "local_message_id",
]);

/** Schemas of every named error in the spec: an error body may match any of them. */
function errorSchemas(spec: Spec): Schema[] {
  return Object.entries(spec.components.schemas)
    .filter(([name]) => name.endsWith("Error"))
    .map(([, s]) => s);
}

export function checkResponses(records: ResponseRecord[]): ShapeReport | null {
  const spec = loadSpec();
  if (!spec) return null;
  const checker = new SchemaChecker(spec.components.schemas);
  const report: ShapeReport = { checked: 0, endpoints: new Set(), undocumented: 0, failures: [] };
  const errors = errorSchemas(spec);
  const base = spec.components.schemas.CodedErrorBase;
  for (const r of records) {
    if (r.route === null) continue;
    const op = spec.paths[r.route]?.[r.method.toLowerCase()];
    let response = op?.responses?.[String(r.status)];
    if (!response) {
      report.undocumented++;
      continue;
    }
    if (typeof response.$ref === "string")
      response = spec.components.responses[(response.$ref as string).split("/").pop()!]!;
    const schema = (response.content as Record<string, { schema: Schema }> | undefined)?.["application/json"]
      ?.schema;
    if (!schema) {
      report.undocumented++;
      continue;
    }
    report.checked++;
    report.endpoints.add(`${r.method} ${r.route}`);
    const issues = checker
      .check(r.body, schema)
      .filter((i) => !NOT_IN_SPEC.has(/unexpected field "(.*)"/.exec(i.message)?.[1] ?? ""));
    if (issues.length === 0) continue;
    // The spec documents one example error per status; any other error must still be a coded error
    // (result, msg, code) or match one of the spec's named error schemas.
    if (r.status >= 400 && errors.some((e) => checker.check(r.body, e).length === 0)) continue;
    if (r.status >= 400 && base && checker.check(r.body, base).length === 0) continue;
    report.failures.push(
      `${r.method} ${r.route} ${r.status}: ${issues
        .slice(0, 3)
        .map((i) => `${i.path} ${i.message}`)
        .join("; ")}\n    body: ${JSON.stringify(r.body).slice(0, 400)}`,
    );
  }
  return report;
}
