/**
 * docs/reference/errors.md lists every error code bothost can raise, and no code it cannot: the
 * codes are read from the sources (every quoted UPPER_SNAKE string of src/ and bots/) and from the
 * doc's backticks, and compared both ways.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { expect, it } from "vitest";
import { repoRoot } from "../support/cli.ts";

/** Quoted UPPER_SNAKE strings of the sources that are no code a user meets, each with why. */
const NOT_USER_CODES: Record<string, string> = {
  BAD_INDENT: "the YAML parser's, turned into a located config problem",
  RESOURCE_EXHAUSTION: "the YAML parser's, turned into a located config problem",
  TAG_RESOLVE_FAILED: "the YAML parser's, turned into a located config problem",
  ERR_MODULE_NOT_FOUND: "Node's, turned into MODULE_NOT_FOUND",
  EAI_AGAIN: "the resolver's, turned into NETWORK_ERROR",
  BOTHOST_FENCED: "the Redis scripts' reply, turned into STATE_FENCED",
  BOTHOST_TEST_OUTGOING_TOKEN: "an environment variable of the testing kit",
  ASSISTANT_API_KEY: "an environment variable the assistant bot reads",
  DIALOG_ENDED: "a dialog's run stopping inside the pipeline; never reaches a handler or a letter",
  DIALOG_LOG_MOVED: "a dialog's run stopping inside the pipeline; never reaches a handler or a letter",
  SETUP_OFFLINE: "an offline setup's server call, turned into PREVIEW_OFFLINE",
  SANDBOX_API_ERROR: "the sandbox's refusal inside its routes; answered with the server's own code",
};
const FOREIGN = /^(FST_|UND_ERR_)/;

async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(repoRoot, dir), { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => path.join(e.parentPath, e.name));
}

it("errors.md lists every code the sources raise, and only those", async () => {
  const inCode = new Set<string>();
  for (const file of [...(await sources("src")), ...(await sources("bots"))]) {
    const text = await readFile(file, "utf8");
    for (const m of text.matchAll(/"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"/g)) inCode.add(m[1]!);
  }
  const doc = await readFile(path.join(repoRoot, "docs/reference/errors.md"), "utf8");
  const inDoc = new Set([...doc.matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`/g)].map((m) => m[1]!));
  // Made from the status (`HTTP_${status}`), and the config's environment variable.
  const notInCode = new Set(["HTTP_401", "BOTHOST_CONFIG"]);

  const unlisted = [...inCode].filter((c) => !inDoc.has(c) && !(c in NOT_USER_CODES) && !FOREIGN.test(c));
  const unknown = [...inDoc].filter((c) => !inCode.has(c) && !notInCode.has(c));
  const listedInternal = Object.keys(NOT_USER_CODES).filter((c) => inDoc.has(c) || !inCode.has(c));
  expect({ unlisted, unknown, listedInternal }).toEqual({ unlisted: [], unknown: [], listedInternal: [] });
});
