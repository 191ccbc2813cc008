/**
 * `startSandbox` as bothost/testing hands it to a bot's tests, under any test runner (vitest,
 * node:test, jest) or a plain script: the sandbox whose `control` calls fail with a stack that
 * starts at the test's own line (an email the org lacks), not among the sandbox's frames; so does
 * a start refused for its options (an org file's mistake).
 */
import { startSandbox as start } from "../sandbox/start-sandbox.ts";
import type { Sandbox, SandboxOptions } from "../sandbox/types.ts";
import { kitFacingSandbox, withoutKitFrames } from "./kit-frames.ts";

/** Start an in-memory sandbox server (see {@link SandboxOptions}); `stop()` it when done. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  try {
    return kitFacingSandbox(await start(options));
  } catch (err) {
    throw withoutKitFrames(err);
  }
}
