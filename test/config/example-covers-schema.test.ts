/**
 * config.example.yaml shows every option (README.md says so): each key of the config schema, at
 * every depth, must appear in it, set or commented out. A key added to src/config/schema*.ts
 * without a line in the example fails here, naming the key.
 */
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "../../src/config/load-config.ts";
import { ConfigSchema } from "../../src/config/schema.ts";

/** Wrappers that do not change which keys a value has. */
const WRAPPERS = new Set(["optional", "nullable", "default", "prefault", "readonly", "catch", "nonoptional"]);

/**
 * Every key path the schema accepts, as `a.b.c`; a record's keys (bot names) are `*`. A sub-schema
 * used at several places (a bot's own `server:` has the top-level `server:`'s keys) is listed once,
 * where it is first met: the example describes it there.
 */
function schemaPaths(schema: z.ZodType, prefix: string, seen = new Set<z.ZodType>()): string[] {
  let s = schema;
  for (;;) {
    const def = s.def as { type: string; innerType?: z.ZodType; in?: z.ZodType };
    if (WRAPPERS.has(def.type)) s = def.innerType!;
    else if (def.type === "pipe") s = def.in!;
    else break;
  }
  if (seen.has(s)) return [];
  if (s instanceof z.ZodObject) {
    seen.add(s);
    return Object.entries(s.shape).flatMap(([key, value]) => {
      const at = prefix ? `${prefix}.${key}` : key;
      return [at, ...schemaPaths(value as z.ZodType, at, seen)];
    });
  }
  if (s instanceof z.ZodRecord) return schemaPaths(s.valueType as z.ZodType, `${prefix}.*`, seen);
  return [];
}

/**
 * The key paths written in the example, commented out or not: a line `key:` (after any `#`) sits
 * under the nearest less indented key line above it, and `key: { a: …, b: … }` holds a and b.
 * Names under `bots:` (and a bot's `webhooks:`) become `*`.
 */
function examplePaths(text: string): Set<string> {
  const found = new Set<string>();
  const stack: { indent: number; key: string }[] = [];
  for (const line of text.split("\n")) {
    const m = /^(\s*)(?:#( ?)(\s*))?([a-z_][a-z0-9_-]*):(?:\s+(.*))?$/.exec(line);
    if (!m) continue;
    const indent = m[1]!.length + (m[3]?.length ?? 0);
    while (stack.length > 0 && stack.at(-1)!.indent >= indent) stack.pop();
    const named = stack.length === 1 || (stack.length === 3 && stack[2]!.key === "webhooks");
    const key = named && stack[0]!.key === "bots" ? "*" : m[4]!;
    stack.push({ indent, key });
    const at = stack.map((e) => e.key).join(".");
    found.add(at);
    const flow = /^\{(.*)\}/.exec(m[5] ?? "");
    for (const inner of (flow?.[1] ?? "").matchAll(/([a-z_][a-z0-9_]*):/g)) found.add(`${at}.${inner[1]}`);
  }
  return found;
}

describe("config.example.yaml", () => {
  it("shows every key of the config schema", async () => {
    const text = await readFile("config.example.yaml", "utf8");
    const shown = examplePaths(text);
    const keys = schemaPaths(ConfigSchema, "");
    expect(keys).toContain("bots.*.retries.dead_letters");
    expect(keys).toContain("http.admin_token");
    expect(keys).toContain("bots.*.webhooks.*.idempotency_window");
    expect(keys.filter((k) => !shown.has(k))).toEqual([]);
  });

  it("the check fails for a key the example leaves out", () => {
    const shown = examplePaths("bots:\n  a:\n    module: ./a.ts\n    # retries:\n    #   attempts: 3\n");
    expect(shown.has("bots.*.retries.attempts")).toBe(true);
    expect(shown.has("bots.*.retries.backoff")).toBe(false);
  });

  it("loads with its retries block as written", async () => {
    const config = await loadConfig("config.example.yaml", {
      env: {
        MODERATION_BOT_API_KEY: "fake-key-0040",
        STANDUP_BOT_API_KEY: "fake-key-0042",
        ASSISTANT_BOT_API_KEY: "fake-key-0043",
        ECHO_BOT_API_KEY: "fake-key-0041",
      },
    });
    expect(config.bots.moderator!.retries).toEqual({
      attempts: 5,
      backoff: 2_000,
      max_backoff: 30_000,
      dead_letters: 1_000,
    });
  });
});
