/**
 * Checks the client against the server's OpenAPI spec: for every endpoint the client covers,
 * each parameter it sends exists in the spec for that path and method, the required ones are
 * sent, and JSON-encoded vs plain-string values agree with the spec's types. Runs each typed
 * method against the recording test server, so it checks what really goes on the wire.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { parse } from "yaml";
import { test } from "../support/api/client-fixture.ts";
import { endpointCases } from "../support/api/endpoint-cases.ts";
import { Spec, type SpecParam } from "../support/api/openapi-shapes.ts";
import { success } from "../support/api/test-server.ts";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const specFile = resolve(repoRoot, "../shared/zulip-api/openapi.yaml");
const present = existsSync(specFile);
if (!present) console.warn(`openapi-params: skipped, the spec is not at ${specFile}`);

/** Endpoints the seed describes that the spec copy lacks; the test asserts they are still absent. */
const notInSpec = new Set(["POST /realm/domains", "PATCH /users/me/profile_data"]);
/** Parameters the server takes but the spec does not document, with where we know them from. */
const undocumented: Record<string, Record<string, string>> = {
  "POST /register": { queue_lifespan_secs: "accepted by the server, which marks it DOCUMENTATION_PENDING" },
  "PATCH /realm/user_settings_defaults": {
    web_inbox_show_channel_folders: "in the seed; newer than this spec copy (about FL 420)",
  },
};

let spec: Spec;
const checkedEndpoints = new Set<string>();
let checkedParams = 0;

describe.skipIf(!present)(
  `client parameters vs the OpenAPI spec (${present ? specFile : "spec absent: skipped"})`,
  () => {
    beforeAll(() => {
      // 1.2 MB of YAML: parse once for the whole file.
      spec = new Spec(parse(readFileSync(specFile, "utf8")));
    });

    afterAll(() => {
      console.info(
        `openapi-params: checked ${checkedEndpoints.size} endpoints (${endpointCases.length} calls), ` +
          `${checkedParams} parameters against ${specFile}; not in the spec: ${[...notInSpec].join(", ")}`,
      );
    });

    test.for(endpointCases)("$spec — $name", async (row, { server, makeClient }) => {
      const [method = "", template = ""] = row.spec.split(" ");
      if (notInSpec.has(row.spec)) {
        expect(
          spec.operation(method, template),
          `${row.spec} appeared in the spec: check it`,
        ).toBeUndefined();
        return;
      }
      expect(spec.operation(method, template), `${row.spec} is not in the spec`).toBeDefined();

      server.reply(success(row.response));
      await row.call(makeClient());
      const req = server.requests[0]!;
      expect(req.method).toBe(method);
      const sent = method === "GET" ? req.query : req.body;
      const params = spec.params(method, template);
      const problems: string[] = [];

      // Path parameters: the concrete path must fit the template, each segment its type.
      const names = [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? "");
      const pattern = new RegExp(`^/api/v1${template.replace(/\{\w+\}/g, "([^/]+)")}$`);
      const match = pattern.exec(req.path);
      if (!match) problems.push(`path ${req.path} does not fit ${template}`);
      names.forEach((name, i) => {
        const param = params.find((p) => p.in === "path" && p.name === name);
        const raw = decodeURIComponent(match?.[i + 1] ?? "");
        if (!param) problems.push(`path parameter ${name} not in the spec`);
        else problems.push(...checkValue(param, raw));
        checkedParams++;
      });

      const where = method === "GET" ? "query" : "body";
      const declared = params.filter((p) => p.in === where);
      for (const [name, raw] of Object.entries(sent)) {
        checkedParams++;
        const param = declared.find((p) => p.name === name);
        if (!param) {
          if (!undocumented[row.spec]?.[name]) problems.push(`${where} parameter ${name} is not in the spec`);
          continue;
        }
        problems.push(...checkValue(param, raw));
      }
      for (const param of declared) {
        if (param.required && !(param.name in sent))
          problems.push(`required parameter ${param.name} not sent`);
      }
      checkedEndpoints.add(row.spec);
      expect(problems).toEqual([]);
    });
  },
);

/** Does the wire text fit the spec's parameter: JSON where the spec wants JSON, raw where a string? */
function checkValue(param: SpecParam, raw: string): string[] {
  const where = param.name;
  if (!param.json) {
    if (raw.startsWith('"')) return [`${where}: sent JSON-quoted, the spec wants a plain string`];
    return spec.check(param.schema, raw, where);
  }
  let parsed: unknown;
  let parses = true;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parses = false;
  }
  if (parses && spec.check(param.schema, parsed, where).length === 0) return [];
  // A mixed schema (e.g. `to`: a channel name or an id) takes a raw string where a string is
  // allowed (see docs/internals/server-behaviour.md#sending-messages).
  const mixed = !spec.isString(param.schema) && spec.allowsString(param.schema);
  if (mixed && spec.check(param.schema, raw, where).length === 0) return [];
  return parses
    ? spec.check(param.schema, parsed, where)
    : [`${where}: ${JSON.stringify(raw)} is not JSON, the spec wants JSON`];
}
