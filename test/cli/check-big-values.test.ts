/**
 * `bothost check` on config files holding a megabyte value, name or variable in every kind of
 * place: each problem names the field and cuts the text it shows, so no run prints over 64 KB.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, runCli } from "../support/cli.ts";

const BIG = "x".repeat(1_000_000);
const SPACED = "word ".repeat(200_000);
const BOT = "bots:\n  b:\n    module: ./b.mjs\n    email: b@x.example\n";

/** Config files, each with one huge thing in it (the rest valid or simply wrong). */
const CASES: Record<string, string> = {
  "a variable's name": `server:\n  url: "\${${BIG}}"\n${BOT}`,
  "an enum value": `server:\n  url: sandbox\nlog:\n  level: ${BIG}\n${BOT}`,
  "an unknown key": `server:\n  url: sandbox\n${BIG}: 1\n${BOT}`,
  "a bot's name": `server:\n  url: sandbox\nbots:\n  ${BIG}:\n    module: ./b.mjs\n`,
  "a URL": `server:\n  url: ${BIG}\n${BOT}`,
  "a duration": `server:\n  url: sandbox\nshutdown_timeout: ${BIG}\n${BOT}`,
  "a listen address": `server:\n  url: sandbox\nhttp:\n  listen: ${BIG}\n${BOT}`,
  "an email": `server:\n  url: sandbox\nbots:\n  b:\n    module: ./b.mjs\n    email: ${BIG}\n`,
  "a module path": `server:\n  url: sandbox\nbots:\n  b:\n    module: ./${BIG}.mjs\n    email: b@x.example\n`,
  "a text with spaces": `server:\n  url: sandbox\nlog:\n  level: "${SPACED}"\n${BOT}`,
  "a default of a variable": `server:\n  url: sandbox\nconcurrency: "\${UNSET_ONE:-${BIG}}"\n${BOT}`,
};

let dir: string;
beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(path.join(tmpdir(), "bothost-big-values-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("bothost check on a config with a megabyte in it", () => {
  it.each(Object.keys(CASES))("%s: refused in under 64 KB of output, naming the field", async (name) => {
    const file = path.join(dir, `${name.replaceAll(" ", "-")}.yaml`);
    await writeFile(file, CASES[name]!);
    const { code, stdout, stderr } = await runCli(["check", "--config", file]);
    expect(code).toBe(2);
    expect(Buffer.byteLength(stdout + stderr)).toBeLessThan(64 * 1024);
    expect(stdout + stderr).toContain(`${path.basename(file)}:`);
  });
});
