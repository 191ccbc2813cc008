/**
 * The help of the commands that talk to the running daemon (status, reload, failed, dialogs) says
 * where its admin socket is as docs/operations/running.md does: in the state directory for
 * `state.path`, in a per-user folder of the temporary directory for `state.redis` (an operator of
 * a Redis deployment looking in the state directory finds no socket there).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, runCli } from "../support/cli.ts";

beforeAll(() => assertBuilt());

describe("the admin socket's place in --help", () => {
  for (const command of ["status", "reload", "failed", "dialogs"]) {
    it(`bothost ${command} --help names the socket's place with state.redis too`, async () => {
      const help = (await runCli([command, "--help"])).stdout.replace(/\s+/g, " ");
      expect(help).toMatch(
        /admin socket \(in the state directory; with state\.redis, in \$TMPDIR\/bothost-<uid>\/\)/,
      );
    });
  }
});
