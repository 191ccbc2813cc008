/**
 * The CLI refuses a Node.js its package does not support before anything else runs: one line, exit
 * code 2, no stack trace. The lines it accepts are package.json's `engines`, read here.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { NODE_LINES, unsupportedNode } from "../../src/cli/node-check.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const engines = (JSON.parse(readFileSync(`${root}package.json`, "utf8")) as { engines: { node: string } })
  .engines;

it("accepts exactly the lines package.json's engines declares", () => {
  const declared = NODE_LINES.map((l) => (l.later ? `>=${l.major}` : `^${l.major}.${l.minor}.0`)).join(
    " || ",
  );
  expect(declared).toBe(engines.node);
  for (const v of [
    "20.19.0",
    "20.20.2",
    "22.12.0",
    "22.20.1",
    "24.0.0",
    "24.22.3",
    "25.1.0",
    process.versions.node,
  ])
    expect(unsupportedNode(v), v).toBeUndefined();
  for (const v of ["18.20.8", "19.9.0", "20.18.3", "21.7.3", "22.11.0", "23.11.1", "16.20.2"])
    expect(unsupportedNode(v), v).toMatch(
      new RegExp(`^Node\\.js ${v.replaceAll(".", "\\.")} is not supported`),
    );
});

it("the CLI says so in one line and exits 2 before any command runs", () => {
  // The Node.js of an older line, as the CLI reads it (the process's own is supported).
  const older = "data:text/javascript,Object.defineProperty(process.versions,'node',{value:'18.20.8'})";
  const out = spawnSync(
    process.execPath,
    ["--import", older, `${root}dist/cli/main.js`, "check", "--config", "nowhere.yaml"],
    {
      encoding: "utf8",
    },
  );
  expect(out.status).toBe(2);
  expect(out.stdout).toBe("");
  expect(out.stderr).toBe(
    `bothost: Node.js 18.20.8 (${process.execPath}) is not supported: bothost runs on Node.js 20.19 or a later 20, 22.12 or a later 22, or 24 and later\n`,
  );
});
