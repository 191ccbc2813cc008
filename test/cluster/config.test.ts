/**
 * `state:` takes a directory or a Redis URL (never both) and `leases:` needs Redis: located
 * errors that say how to fix them, and never repeat a Redis password.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isConfigError } from "../../src/config/config-error.ts";
import { loadConfig } from "../../src/config/load-config.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "bothost-cluster-config-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const BOTS =
  "bots:\n  echo:\n    module: ./echo.ts\n    email: echo-bot@chat.example.org\n    api_key: fake-key-0001\n";

async function load(top: string) {
  const file = path.join(dir, `c${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(file, `server:\n  url: https://chat.example.org\n${top}${BOTS}`);
  return { file, result: loadConfig(file, { env: {} }) };
}

async function problems(top: string): Promise<string[]> {
  const { file, result } = await load(top);
  const err = await result.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isConfigError(err)) throw new Error(`expected a ConfigError, got ${String(err)}`);
  return err.format().replaceAll(file, "FILE").split("\n");
}

describe("state and leases in the config", () => {
  it("reads state.redis with its default prefix and lease ttl, or a prefix and ttl given", async () => {
    const plain = await (await load("state:\n  redis: redis://127.0.0.1:6379/0\nleases: {}\n")).result;
    expect(plain.state).toEqual({ redis: "redis://127.0.0.1:6379/0", prefix: "bothost" });
    expect(plain.leases).toEqual({ ttl: 15_000 });
    const given = await (
      await load(
        "state:\n  redis: rediss://:pw@redis.internal:6380/2\n  prefix: team-a\nleases:\n  ttl: 3s\n",
      )
    ).result;
    expect(given.state).toEqual({ redis: "rediss://:pw@redis.internal:6380/2", prefix: "team-a" });
    expect(given.leases).toEqual({ ttl: 3_000 });
  });

  it("keeps state.path (made absolute) and its default without Redis", async () => {
    const { file, result } = await load("state:\n  path: ./here\n");
    expect((await result).state).toEqual({ path: path.join(path.dirname(file), "here") });
    const defaulted = await (await load("")).result;
    expect(defaulted.state).toEqual({ path: path.join(dir, ".bothost") });
    expect(defaulted.leases).toBeUndefined();
  });

  it("refuses path and redis together, a prefix or leases without redis, and bad URLs", async () => {
    expect(await problems("state:\n  path: ./here\n  redis: redis://:hunter2pw@h:6379/0\n")).toEqual([
      "FILE:5:10 state.redis: cannot be used together with state.path: keep path for one instance with its state on disk, or redis for instances sharing their state",
    ]);
    expect(await problems("state:\n  prefix: x\nleases:\n  ttl: 5s\n")).toEqual([
      "FILE:4:11 state.prefix: only applies to state.redis: add redis: redis://host:6379/0, or remove prefix",
      "FILE:6:3 leases: needs state.redis: leases share bots between instances through Redis; add state.redis, or remove leases",
    ]);
    expect(await problems("leases:\n  ttl: 5s\n")).toEqual([
      "FILE:4:3 leases: needs state.redis: leases share bots between instances through Redis; add state.redis, or remove leases",
    ]);
    expect(
      await problems("state:\n  redis: http://:hunter2pw@h:6379/0\n  prefix: 'a:b'\nleases:\n  ttl: 200ms\n"),
    ).toEqual([
      "FILE:4:10 state.redis: uses http://: write redis://host:6379/0, or rediss:// for TLS",
      'FILE:5:11 state.prefix: must be 1 to 64 letters, digits, "_", "." or "-" (like bothost)',
      "FILE:7:8 leases.ttl: is too short: use at least 1s",
    ]);
    expect(await problems("state:\n  redis: not a url\n")).toEqual([
      "FILE:4:10 state.redis: is not a URL: write redis://host:6379/0 (rediss:// for TLS; a password goes in as redis://:password@host:6379/0)",
    ]);
    expect(await problems("state:\n  redis: redis://h:6379/db/x\n")).toEqual([
      "FILE:4:10 state.redis: has a path that is not a database number: write redis://host:6379/0",
    ]);
    const all = (await problems("state:\n  path: ./here\n  redis: redis://:hunter2pw@h:6379/0\n")).join("\n");
    expect(all).not.toContain("hunter2pw");
  });
});
