import { expect, it } from "vitest";
import type { BotConfig, Config } from "../../src/config/schema.ts";
import { type BotIdentity, entryHash, planReload } from "../../src/daemon/reload-plan.ts";

const bot = (over: Partial<BotConfig> = {}) =>
  ({ module: "./bots/echo.ts", email: "echo@x.example", api_key: "key-1", ...over }) as unknown as BotConfig;
const config = (over: Record<string, unknown> = {}) =>
  ({ state: { path: "/s" }, bots: {}, ...over }) as unknown as Config;
const ids = (entries: Record<string, [BotConfig, string]>) =>
  new Map<string, BotIdentity>(
    Object.entries(entries).map(([n, [b, m]]) => [n, { entry: entryHash(b), module: m }]),
  );

it("adds, removes, restarts what changed (entry, key, settings, module) and keeps the rest", () => {
  const before = ids({
    same: [bot(), "m1"],
    rotated: [bot(), "m1"],
    tuned: [bot({ settings: { threshold: 3 } } as Partial<BotConfig>), "m1"],
    edited: [bot(), "m1"],
    gone: [bot(), "m1"],
  });
  const after = ids({
    same: [bot(), "m1"],
    rotated: [bot({ api_key: "key-2" }), "m1"],
    tuned: [bot({ settings: { threshold: 4 } } as Partial<BotConfig>), "m1"],
    edited: [bot(), "m2"],
    fresh: [bot(), "m1"],
  });
  expect(planReload({ config: config(), bots: before }, { config: config(), bots: after })).toEqual({
    add: ["fresh"],
    remove: ["gone"],
    restart: ["rotated", "tuned", "edited"],
    keep: ["same"],
    needRestart: [],
  });
});

it("key order in an entry does not count as a change", () => {
  const a = { module: "./x.ts", email: "e@x", api_key: "k" } as unknown as BotConfig;
  const b = { api_key: "k", email: "e@x", module: "./x.ts" } as unknown as BotConfig;
  expect(entryHash(a)).toBe(entryHash(b));
  expect(entryHash(a)).toMatch(/^[0-9a-f]{64}$/);
});

it("names the settings only a restart applies", () => {
  const plan = planReload(
    { config: config({ http: { listen: "127.0.0.1:8080" } }), bots: new Map() },
    { config: config({ http: { listen: "127.0.0.1:9090" }, state: { path: "/other" } }), bots: new Map() },
  );
  expect(plan.needRestart).toEqual(["state", "http"]);
});
