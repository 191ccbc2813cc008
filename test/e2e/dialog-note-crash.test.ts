/**
 * An operator's end of a dialog (`bothost dialogs end`) under `bothost run`, the daemon killed
 * (kill -9) while the person's note is on its way: right after the note was marked `sending` in the
 * dialog's header, before its send (crash point `note-marked`), and right after the server made
 * the send, before the daemon read its answer. Started again on the same state, the note is said
 * once (looked for first, found or not), the dialog stays ended, and the person's next message is
 * an ordinary one. On the file store, and on Redis when one answers (else skipped with one line).
 */
import { describe, expect, it } from "vitest";
import type { ResponseRecord } from "../../src/sandbox/types.ts";
import { type CliProcess, runCli } from "../support/cli.ts";
import { casesOn, crashBackends } from "../support/crash-backends.ts";
import { setUpDialogDaemon } from "../support/dialog-daemon.ts";
import { botSaid, sayToBot as say, useE2eCleanup } from "../support/e2e-daemon.ts";

useE2eCleanup();

const backends = await crashBackends("dialog-note-crash");
const NOTE = "An operator ended this conversation.";
const CASES = ["before its send (`note-marked`)", "as the server made its send"] as const;

describe.each(backends)("on the %s", (name, backendFor) => {
  it.each(casesOn(name, CASES, (c) => c === CASES[0]))(
    "killed %s: the note is said once at the next start",
    { timeout: 60_000 },
    async (point) => {
      let hook: ((r: ResponseRecord) => void) | undefined;
      const { sandbox, start, file, key } = await setUpDialogDaemon(backendFor, undefined, undefined, {
        onResponse: (r) => hook?.(r),
      });
      const armed: CliProcess = await start(point === CASES[0] ? { BOTHOST_FAILPOINTS: "note-marked" } : {});
      const id = String(say(sandbox, "standup"));
      await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(["Q1 yesterday?"]);
      if (point === CASES[1])
        hook = (r) => {
          if (r.method !== "POST" || r.route !== "/messages") return;
          hook = undefined;
          armed.kill("SIGKILL");
        };
      const ended = await runCli(["dialogs", "end", "standup", id, "-c", file], { env: key });
      expect(ended).toMatchObject({ code: 0, stderr: "" });
      expect(await armed.exited).toEqual({ code: null, signal: "SIGKILL" });
      expect(botSaid(sandbox)).toEqual(point === CASES[0] ? ["Q1 yesterday?"] : ["Q1 yesterday?", NOTE]);

      const daemon = await start();
      await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(["Q1 yesterday?", NOTE]);
      // No longer an answer to Q1: an ordinary command, answered after the note.
      say(sandbox, "ping");
      const pong = `pong ${daemon.pid}`;
      await expect.poll(() => botSaid(sandbox).at(-1), { timeout: 15_000 }).toBe(pong);
      const listed = await runCli(["dialogs", "-c", file], { env: key });
      expect(listed.stdout).toContain("No open dialogs.");
      daemon.kill("SIGTERM");
      expect(await daemon.exited).toEqual({ code: 0, signal: null });
      expect(botSaid(sandbox)).toEqual(["Q1 yesterday?", NOTE, pong]);
    },
  );
});
