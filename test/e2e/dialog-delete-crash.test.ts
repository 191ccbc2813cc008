/**
 * A dialog in a channel topic, its waiting question deleted by the owner, and `bothost run`
 * killed right after the deletion's append landed (`BOTHOST_FAILPOINTS=answer-logged@2`: the
 * first answer's append, then the deletion's), before the dialog ran. A daemon started again on
 * the same state runs it once: the prompt, uncaught, rejects with `PROMPT_DELETED` (one info
 * line), the dialog's state write is never made, and the person's next message is ordinary. On
 * the file store, and on Redis when one answers (else skipped with one line).
 */
import { describe, expect, it } from "vitest";
import { PROMPT_DELETED } from "../../src/pipeline/dialogs/prompt-error.ts";
import type { CliProcess } from "../support/cli.ts";
import { crashBackends } from "../support/crash-backends.ts";
import { doneCount, QUESTIONS, setUpDialogDaemon } from "../support/dialog-daemon.ts";
import { botSaid, MEMBER, OWNER, useE2eCleanup } from "../support/e2e-daemon.ts";

useE2eCleanup();

const backends = await crashBackends("dialog-delete-crash");

describe.each(backends)("on the %s", (_name, backendFor) => {
  it("killed right after a deleted question's append: the dialog ends once at the next start", {
    timeout: 60_000,
  }, async () => {
    const { sandbox, backend, start } = await setUpDialogDaemon(backendFor);
    const said = () => botSaid(sandbox);
    const say = (content: string) =>
      sandbox.control.sendAs(MEMBER, {
        type: "stream",
        to: "c0",
        topic: "standup",
        content: `@**Bot 0** ${content}`,
      }).id;

    const armed: CliProcess = await start({ BOTHOST_FAILPOINTS: "answer-logged@2" });
    say("standup");
    await expect.poll(said, { timeout: 15_000 }).toEqual([QUESTIONS[0]]);
    say("did a");
    await expect.poll(said, { timeout: 15_000 }).toEqual(QUESTIONS.slice(0, 2));
    // The first question renewed the bot's queue with message deletions.
    await expect
      .poll(() => sandbox.control.queues().some((q) => q.event_types?.includes("delete_message")), {
        timeout: 15_000,
      })
      .toBe(true);

    // The owner deletes the waiting question: the armed daemon records it and kills itself.
    const q2 = sandbox.control.messages().find((m) => m.content === QUESTIONS[1])!.id;
    const auth = Buffer.from(`${OWNER}:${sandbox.control.apiKeyOf(OWNER)}`).toString("base64");
    const deleted = await fetch(`${sandbox.url}/api/v1/messages/${q2}`, {
      method: "DELETE",
      headers: { authorization: `Basic ${auth}` },
    });
    expect(deleted.status).toBe(200);
    expect(await armed.exited).toEqual({ code: null, signal: "SIGKILL" });

    const daemon = await start();
    await daemon.waitForLog((l) => l.msg === PROMPT_DELETED, 15_000);
    say("ping");
    await expect.poll(said, { timeout: 15_000 }).toEqual([QUESTIONS[0], `pong ${daemon.pid}`]);
    // Not an answer: an ordinary message (no command of the bot's), the dialog over.
    say("do b");
    const ordinary = "I don't know the command `do`. Say `help` for the list.";
    await expect.poll(said, { timeout: 15_000 }).toEqual([QUESTIONS[0], `pong ${daemon.pid}`, ordinary]);
    daemon.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    expect(daemon.logs().filter((l) => l.msg === PROMPT_DELETED)).toHaveLength(1);
    expect(await doneCount(backend)).toBeUndefined();
  });
});
