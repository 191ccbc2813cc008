// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the configs use ${VAR}.
/**
 * `state.redis` through Sentinel: the mapping form beside the URL, its fields checked with located
 * errors that name the field, and its passwords never repeated in a message.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isConfigError } from "../../src/config/config-error.ts";
import { loadConfig } from "../../src/config/load-config.ts";
import { describeRedis } from "../../src/state/redis-url.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "bothost-sentinel-config-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const BOTS =
  "bots:\n  echo:\n    module: ./echo.ts\n    email: echo-bot@chat.example.org\n    api_key: fake-key-0001\n";
const ENV = { REDIS_PASSWORD: "hunter2-primary", SENTINEL_PASSWORD: "hunter2-sentinel" };

async function load(state: string) {
  const file = path.join(dir, `c${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(file, `server:\n  url: https://chat.example.org\nstate:\n  redis:\n${state}${BOTS}`);
  return { file, result: loadConfig(file, { env: ENV }) };
}

async function problems(state: string): Promise<string[]> {
  const { file, result } = await load(state);
  const err = await result.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isConfigError(err)) throw new Error(`expected a ConfigError, got ${String(err)}`);
  return err.format().replaceAll(file, "FILE").split("\n");
}

const FULL =
  '    sentinels: ["10.0.0.1:26379", "10.0.0.2:26379", "[::1]:26379"]\n' +
  "    name: mymaster\n    db: 2\n    password: ${REDIS_PASSWORD}\n" +
  "    sentinel_password: ${SENTINEL_PASSWORD}\n    tls: true\n";

describe("state.redis through Sentinel", () => {
  it("reads every field, and describes the target without its passwords", async () => {
    const config = await (await load(FULL)).result;
    expect(config.state).toEqual({
      redis: {
        sentinels: ["10.0.0.1:26379", "10.0.0.2:26379", "[::1]:26379"],
        name: "mymaster",
        db: 2,
        password: "hunter2-primary",
        sentinelPassword: "hunter2-sentinel",
        tls: true,
      },
      prefix: "bothost",
    });
    const shown = describeRedis(config.state.redis!);
    expect(shown).toBe('sentinel master "mymaster" (db 2) via 10.0.0.1:26379,10.0.0.2:26379,[::1]:26379');
    const minimal = await (await load('    sentinels: ["s1:26379"]\n    name: m\n')).result;
    expect(minimal.state).toEqual({ redis: { sentinels: ["s1:26379"], name: "m" }, prefix: "bothost" });
  });

  it("names the field of each mistake, and never prints a password", async () => {
    const found = await problems(
      '    sentinels: ["10.0.0.1", "ok:26379"]\n    db: -1\n    password: ${REDIS_PASSWORD}\n    tsl: true\n',
    );
    expect(found).toEqual([
      "FILE:4:3 state.redis.name: is missing: add name: mymaster (the master group the Sentinels monitor)",
      'FILE:5:17 state.redis.sentinels[0]: is not host:port: write each Sentinel like "10.0.0.1:26379"',
      "FILE:6:9 state.redis.db: must be a database number from 0 to 65535",
      'FILE:8:5 state.redis.tsl: is not a known key: did you mean "tls"?',
    ]);
    expect(found.join("\n")).not.toContain("hunter2");
    expect(await problems("    sentinels: []\n    name: ''\n")).toEqual([
      'FILE:5:16 state.redis.sentinels: is empty: list the Sentinels, like ["10.0.0.1:26379", "10.0.0.2:26379"]',
      "FILE:6:11 state.redis.name: is empty: give the master group's name (sentinel monitor <name> …)",
    ]);
  });

  it("takes a single Redis's url, host or port key as a URL written the wrong way", async () => {
    expect(await problems("    url: redis://127.0.0.1:6379/0\n")).toEqual([
      "FILE:5:10 state.redis.url: is not a key here: give the URL as the value of redis itself (redis: redis://host:6379/0); a mapping is for Sentinel (sentinels and name)",
    ]);
    expect(await problems("    host: 10.0.0.5\n    port: 6379\n    password: ${REDIS_PASSWORD}\n")).toEqual([
      "FILE:5:11 state.redis.host: is not a key here: give host and port as a URL, the value of redis itself (redis: redis://host:6379/0); a mapping is for Sentinel (sentinels and name)",
    ]);
    // With sentinels, url is an unknown key of the Sentinel form as any other.
    expect(await problems('    sentinels: ["s1:26379"]\n    name: m\n    url: redis://x\n')).toEqual([
      "FILE:7:5 state.redis.url: is not a known key: remove it (known keys here: sentinels, name, db, password, sentinel_password, tls)",
    ]);
  });

  it("says which two forms state.redis takes when it is neither", async () => {
    const file = path.join(dir, "number.yaml");
    await writeFile(file, `server:\n  url: https://chat.example.org\nstate:\n  redis: 6379\n${BOTS}`);
    const err = await loadConfig(file, { env: {} }).catch((e: unknown) => e);
    if (!isConfigError(err)) throw new Error(`expected a ConfigError, got ${String(err)}`);
    expect(err.format().replaceAll(file, "FILE")).toBe(
      "FILE:4:10 state.redis: must be text or a mapping (key: value entries), not a whole number",
    );
  });
});
