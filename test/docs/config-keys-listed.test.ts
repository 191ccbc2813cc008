/**
 * docs/reference/config.md's reference table has a row for every key the config schema takes,
 * and none it does not: the keys are read by walking the zod schema, compared both ways.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { expect, it } from "vitest";
import { ConfigSchema } from "../../src/config/schema.ts";
import { repoRoot } from "../support/cli.ts";

interface Def {
  type: string;
  shape?: Record<string, { _zod: { def: Def } }>;
  innerType?: { _zod: { def: Def } };
  in?: { _zod: { def: Def } };
  out?: { _zod: { def: Def } };
  valueType?: { _zod: { def: Def } };
  options?: { _zod: { def: Def } }[];
}

/** Every key under `def` as the doc writes it: `state.redis.db`, `….retries.attempts`, `….webhooks.<name>`. */
function keys(def: Def, at: string, out: { all: Set<string>; leaves: Set<string> }): boolean {
  const child = (name: string) => (at === "" ? name : at === "bots.<name>" ? `….${name}` : `${at}.${name}`);
  switch (def.type) {
    case "optional":
    case "default":
    case "prefault":
    case "nullable":
      return keys(def.innerType!._zod.def, at, out);
    case "pipe": // a transform's input, or a preprocess's output
      return [def.in!, def.out!].map((s) => keys(s._zod.def, at, out)).some(Boolean);
    case "union":
      return def.options!.map((o) => keys(o._zod.def, at, out)).some(Boolean);
    case "record": {
      const path = `${at}.<name>`;
      out.all.add(path);
      if (!keys(def.valueType!._zod.def, path, out)) out.leaves.add(path);
      return true;
    }
    case "object": {
      for (const [name, schema] of Object.entries(def.shape!)) {
        const path = child(name);
        // A bot's own `server` is documented as "like `server`".
        if (path === "….server") {
          out.all.add(path);
          out.leaves.add(path);
          continue;
        }
        out.all.add(path);
        if (!keys(schema._zod.def, path, out)) out.leaves.add(path);
      }
      return true;
    }
    default:
      return false;
  }
}

it("config.md's reference table has a row for every key of the config schema, and only those", async () => {
  const found = { all: new Set<string>(), leaves: new Set<string>() };
  keys((ConfigSchema as unknown as { _zod: { def: Def } })._zod.def, "", found);
  expect(found.leaves).toContain("….retries.attempts");
  expect(found.leaves).toContain("state.redis.sentinels");

  const doc = await readFile(path.join(repoRoot, "docs/reference/config.md"), "utf8");
  const table = doc.slice(doc.indexOf("## Reference"), doc.indexOf("\n## ", doc.indexOf("## Reference") + 1));
  const rows = [...table.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!).filter((k) => k !== "x-…");

  const undocumented = [...found.leaves].filter((k) => !rows.includes(k));
  const unknown = rows.filter((k) => !found.all.has(k));
  expect({ undocumented, unknown }).toEqual({ undocumented: [], unknown: [] });
});
