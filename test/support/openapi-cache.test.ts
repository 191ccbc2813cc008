/**
 * The parsed API description's cache file in the OS temp dir, shared by the test files of every
 * worker (test/support/sandbox/openapi-shapes.ts): a file another worker has begun but not finished
 * writing is not taken for the spec.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { cacheFileOf, readSpec } from "./sandbox/openapi-shapes.ts";

const SPEC = {
  paths: { "/users/me": { get: { responses: { "200": { type: "object" } } } } },
  components: { schemas: { JsonError: { type: "object" } }, responses: {} },
};

let dir: string;
let specPath: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "bothost-openapi-cache-"));
  specPath = path.join(dir, "openapi.yaml");
  await writeFile(specPath, JSON.stringify(SPEC)); // JSON is YAML
});
afterEach(() => rm(dir, { recursive: true, force: true }));

it.each([
  ["just created, nothing written yet", ""],
  ["cut short", JSON.stringify(SPEC).slice(0, 40)],
])(
  "a cache file %s (another worker writing it) is not read: the spec is parsed, the cache made whole",
  async (_, text) => {
    const cacheFile = cacheFileOf(specPath, dir);
    await writeFile(cacheFile, text);
    expect(readSpec(specPath, dir)).toEqual(SPEC);
    expect(JSON.parse(await readFile(cacheFile, "utf8"))).toEqual(SPEC);
    expect(readSpec(specPath, dir)).toEqual(SPEC);
  },
);

it("is written whole under its name, with no file of the writer's left beside it", async () => {
  expect(readSpec(specPath, dir)).toEqual(SPEC);
  const cacheFile = cacheFileOf(specPath, dir);
  expect((await readdir(dir)).sort()).toEqual([path.basename(cacheFile), "openapi.yaml"].sort());
  expect(JSON.parse(await readFile(cacheFile, "utf8"))).toEqual(SPEC);
});
