/**
 * A dialog in a channel topic, its topic resolved (moved to `✔ standup`) while it waits, and
 * `bothost run` killed right after the move's append landed (`BOTHOST_FAILPOINTS=move-logged`),
 * before the new topic's messages were let through. A daemon started again on the same state
 * takes the answers in the new topic and says everything there: each question once, the
 * dialog's state write made once. And (on Redis) a second question sent just before a kill, its
 * log not written, its topic resolved while down: the dialog follows it. On the file store, and
 * on Redis when one answers (else skipped with one line).
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { CliProcess } from "../support/cli.ts";
import { crashBackends } from "../support/crash-backends.ts";
import { doneCount, QUESTIONS, setUpDialogDaemon } from "../support/dialog-daemon.ts";
import { botEmail, MEMBER, OWNER, useE2eCleanup } from "../support/e2e-daemon.ts";

useE2eCleanup();

const backends = await crashBackends("dialog-move-crash");

describe.each(backends)("on the %s", (name, backendFor) => {
  it("killed right after a move's append: the dialog goes on in the new topic", {
    timeout: 60_000,
  }, async () => {
    const { sandbox, backend, start } = await setUpDialogDaemon(backendFor);
    const { said, say } = talk(sandbox);

    const armed: CliProcess = await start({ BOTHOST_FAILPOINTS: "move-logged" });
    const first = say("standup", "standup");
    await expect.poll(said, { timeout: 15_000 }).toEqual([`standup: ${QUESTIONS[0]}`]);
    say("did a", "standup");
    await expect.poll(said, { timeout: 15_000 }).toHaveLength(2);
    // The first channel question renewed the bot's queue with message moves.
    await expect
      .poll(() => sandbox.control.queues().some((q) => q.event_types?.includes("update_message")), {
        timeout: 15_000,
      })
      .toBe(true);

    // The owner resolves the topic: the armed daemon records the move and kills itself.
    await resolveTopic(sandbox, first);
    expect(await armed.exited).toEqual({ code: null, signal: "SIGKILL" });

    const daemon = await start();
    say("do b", "✔ standup");
    await expect.poll(said, { timeout: 15_000 }).toHaveLength(3);
    say("none", "✔ standup");
    await expect.poll(said, { timeout: 15_000 }).toHaveLength(4);
    expect(said()).toEqual([
      ...QUESTIONS.map((q) => `✔ standup: ${q}`),
      "✔ standup: summary: did a | do b | none",
    ]);
    daemon.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    expect(await doneCount(backend)).toBe(1);
  });

  // On the file store the send's result is not durable at this kill: the question is looked for
  // in its old topic, not found, and asked again there.
  it.runIf(name === "Redis")(
    "killed between a question's send and its append, its topic resolved while down: the dialog follows it",
    { timeout: 60_000 },
    async () => {
      // A bot that receives moves anyway: its first question renews no queue.
      const { sandbox, backend, start, dir } = await setUpDialogDaemon(backendFor, "$DIR/standup.mjs");
      const module = path.join(dir, "standup.mjs");
      const source = await readFile(module, "utf8");
      await writeFile(module, source.replace('events: ["message"]', 'events: ["message", "update_message"]'));
      const { said, say } = talk(sandbox);

      // The second question is sent, and the daemon killed before its append.
      const armed: CliProcess = await start({ BOTHOST_FAILPOINTS: "question-sent@2" });
      const first = say("standup", "standup");
      await expect.poll(said, { timeout: 15_000 }).toEqual([`standup: ${QUESTIONS[0]}`]);
      say("did a", "standup");
      expect(await armed.exited).toEqual({ code: null, signal: "SIGKILL" });
      expect(said()).toEqual(QUESTIONS.slice(0, 2).map((q) => `standup: ${q}`));
      await resolveTopic(sandbox, first);

      // The dialog runs again from its log (its first message as it was, in "standup") and keeps
      // the question its send record names; the move is found by the start's read-back of waiting
      // questions, or, when the question is kept only after it, by that question's own read-back.
      const daemon = await start();
      await daemon.waitForLog((l) => l.msg === "a dialog's topic moved: the dialog follows it", 15_000);
      say("do b", "✔ standup");
      await expect.poll(said, { timeout: 15_000 }).toHaveLength(3);
      say("none", "✔ standup");
      await expect.poll(said, { timeout: 15_000 }).toHaveLength(4);
      expect(said()).toEqual([
        ...QUESTIONS.map((q) => `✔ standup: ${q}`),
        "✔ standup: summary: did a | do b | none",
      ]);
      daemon.kill("SIGTERM");
      expect(await daemon.exited).toEqual({ code: 0, signal: null });
      expect(await doneCount(backend)).toBe(1);
    },
  );
});

/** The owner resolves the topic of message `id` (all of it). */
async function resolveTopic(sandbox: Awaited<ReturnType<typeof setUpDialogDaemon>>["sandbox"], id: number) {
  const auth = Buffer.from(`${OWNER}:${sandbox.control.apiKeyOf(OWNER)}`).toString("base64");
  const moved = await fetch(`${sandbox.url}/api/v1/messages/${id}`, {
    method: "PATCH",
    headers: { authorization: `Basic ${auth}`, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ topic: "✔ standup", propagate_mode: "change_all" }),
  });
  expect(moved.status).toBe(200);
}

/** What bot 0 said (as `topic: content`), and the member's way of saying something to it in c0. */
function talk(sandbox: Awaited<ReturnType<typeof setUpDialogDaemon>>["sandbox"]) {
  const botId = sandbox.control.users().find((u) => u.email === botEmail(0))!.user_id;
  return {
    said: () =>
      sandbox.control
        .messages()
        .filter((m) => m.sender_id === botId)
        .map((m) => `${m.topic}: ${m.content}`),
    say: (content: string, topic: string) =>
      sandbox.control.sendAs(MEMBER, { type: "stream", to: "c0", topic, content: `@**Bot 0** ${content}` })
        .id,
  };
}
