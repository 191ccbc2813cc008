/**
 * Deleted questions and crashes, each killed at its window:
 * - a dialog in a channel topic, its waiting question deleted by the owner, and `bothost run`
 *   killed right after the deletion's append landed (`BOTHOST_FAILPOINTS=answer-logged@2`: the
 *   first answer's append, then the deletion's), before the dialog ran;
 * - a dialog in a direct message, killed right after its first question was sent, before the
 *   question's append (`question-sent@1`), and the question deleted while no daemon runs.
 * A daemon started again on the same state ends the step once: the prompt, uncaught, rejects with
 * `PROMPT_DELETED` (one info line), the dialog's state write is never made, and the person's next
 * message is ordinary (on the file store the second case may instead ask the question again: see
 * there). On the file store, and on Redis when one answers (else skipped with one line).
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PROMPT_DELETED } from "../../src/pipeline/dialogs/prompt-error.ts";
import type { CliProcess } from "../support/cli.ts";
import { crashBackends } from "../support/crash-backends.ts";
import { doneCount, QUESTIONS, setUpDialogDaemon } from "../support/dialog-daemon.ts";
import { botEmail, botSaid, MEMBER, OWNER, useE2eCleanup } from "../support/e2e-daemon.ts";

useE2eCleanup();

const backends = await crashBackends("dialog-delete-crash");

describe.each(backends)("on the %s", (name, backendFor) => {
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
    expect(await deleteAsOwner(sandbox, QUESTIONS[1]!)).toBe(200);
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

  it("killed between a question's send and its append, the question deleted while down: it ends, or is asked again", {
    timeout: 60_000,
  }, async () => {
    // A bot that receives deletions anyway: its first question renews no queue, so the only
    // read-back of the waiting questions is the one at start, before the question waits.
    const { sandbox, backend, start, dir } = await setUpDialogDaemon(backendFor, "$DIR/standup.mjs");
    const module = path.join(dir, "standup.mjs");
    const source = await readFile(module, "utf8");
    await writeFile(module, source.replace('events: ["message"]', 'events: ["message", "delete_message"]'));
    const said = () => botSaid(sandbox);
    // The owner talks to the bot: a direct message whose messages the owner may delete.
    const say = (content: string) =>
      sandbox.control.sendAs(OWNER, { type: "direct", to: [botEmail(0)], content }).id;

    // The first question is sent, and the daemon killed before its append: the dialog's log
    // is not begun, and the message that asked is caught up at the next start.
    const armed: CliProcess = await start({ BOTHOST_FAILPOINTS: "question-sent@1" });
    say("standup");
    expect(await armed.exited).toEqual({ code: null, signal: "SIGKILL" });
    expect(said()).toEqual([QUESTIONS[0]]);
    expect(await deleteAsOwner(sandbox, QUESTIONS[0]!)).toBe(200);

    const daemon = await start();
    // Redis kept the send's result: the question is read back once its append landed, found
    // deleted, and its step ends. The file store commits a run's writes at its end (or within a
    // second): the send's record is still pending, it is looked for, not found, and the question
    // is asked again. Either way the dialog waits at no deleted message.
    const deletedLine = () => daemon.logs().some((l) => l.msg === PROMPT_DELETED);
    await expect.poll(() => deletedLine() || said().length === 1, { timeout: 15_000 }).toBe(true);
    const ended = deletedLine();
    if (name === "Redis") expect(ended).toBe(true);
    say("did a");
    if (ended) {
      const ordinary = "I don't know the command `did`. Say `help` for the list.";
      await expect.poll(said, { timeout: 15_000 }).toEqual([ordinary]);
    } else {
      await expect.poll(said, { timeout: 15_000 }).toEqual(QUESTIONS.slice(0, 2));
    }
    daemon.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    expect(daemon.logs().filter((l) => l.msg === PROMPT_DELETED)).toHaveLength(ended ? 1 : 0);
    expect(await doneCount(backend)).toBeUndefined();
  });
});

/** The owner deletes the bot's message saying `content`; returns the HTTP status. */
async function deleteAsOwner(
  sandbox: Awaited<ReturnType<typeof setUpDialogDaemon>>["sandbox"],
  content: string,
) {
  const id = sandbox.control.messages().find((m) => m.content === content)!.id;
  const auth = Buffer.from(`${OWNER}:${sandbox.control.apiKeyOf(OWNER)}`).toString("base64");
  const deleted = await fetch(`${sandbox.url}/api/v1/messages/${id}`, {
    method: "DELETE",
    headers: { authorization: `Basic ${auth}` },
  });
  return deleted.status;
}
