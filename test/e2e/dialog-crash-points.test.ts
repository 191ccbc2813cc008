/**
 * Durable dialogs killed at the moments that matter, not at random ones: `bothost run` armed with
 * a crash point (`BOTHOST_FAILPOINTS`, src/effects/failpoints.ts) SIGKILLs itself right after an
 * answer's append landed (before its message is marked handled and before the dialog runs),
 * right after a question was sent (before its append), and right after a question's append
 * landed (before the run's message is marked handled). A daemon started again on the same state
 * goes on: each question asked once, each answer under its question, the dialog's state write
 * made once; the same with a `back` (its append, and the question asked again), and with a
 * message the person sent while no daemon ran (caught up beside the dialog holding an answer: the
 * dialog runs once). On the file store, and on Redis when one answers (else skipped with one line).
 */
import { describe, expect, it } from "vitest";
import type { CliProcess } from "../support/cli.ts";
import { casesOn, crashBackends } from "../support/crash-backends.ts";
import { expectDialogDone, QUESTIONS, SUMMARY, setUpDialogDaemon } from "../support/dialog-daemon.ts";
import { botSaid, sayToBot as say, useE2eCleanup } from "../support/e2e-daemon.ts";

useE2eCleanup();

const backends = await crashBackends("dialog-crash-points");

/** The messages the person sends, and what the bot has said once each is handled. */
const SCRIPT: Array<[string, string[]]> = [
  ["standup", QUESTIONS.slice(0, 1)],
  ["did a", QUESTIONS.slice(0, 2)],
  ["do b", QUESTIONS],
  ["none", [...QUESTIONS, SUMMARY]],
];

/** The same dialog with a `back` at the second question: the first is asked again and answered anew. */
const [Q1, Q2, Q3] = QUESTIONS as [string, string, string];
const BACK_SCRIPT: Array<[string, string[]]> = [
  ["standup", [Q1]],
  ["did a", [Q1, Q2]],
  ["back", [Q1, Q2, Q1]],
  ["did c", [Q1, Q2, Q1, Q2]],
  ["do b", [Q1, Q2, Q1, Q2, Q3]],
  ["none", [Q1, Q2, Q1, Q2, Q3, "summary: did c | do b | none"]],
];

/** Each point, and which time it is reached (e.g. the third answer's append, before the summary). */
const POINTS = [
  "question-sent@1",
  "question-logged@1",
  "answer-logged@1",
  "question-sent@2",
  "question-logged@3",
  "answer-logged@3",
];
/** With the back: its append (the second answer's), the first question's send again, and its append. */
const BACK_POINTS = ["answer-logged@2", "question-sent@3", "question-logged@3"];
const CASES = [
  ...POINTS.map((point) => [point, SCRIPT] as const),
  ...BACK_POINTS.map((point) => [`${point} (with a back)`, BACK_SCRIPT] as const),
];

/** On Redis, the points right after a commit (a question's append; an answer's append with its mark). */
const AFTER_COMMIT = /^(question-logged@1|answer-logged)/;

describe.each(backends)("on the %s", (name, backendFor) => {
  it.each(casesOn(name, CASES, ([point]) => AFTER_COMMIT.test(point)))(
    "killed at %s: each question once, each answer in place",
    { timeout: 60_000 },
    async (name, script) => {
      const { sandbox, backend, start } = await setUpDialogDaemon(backendFor);
      let daemon: CliProcess = await start({ BOTHOST_FAILPOINTS: name.split(" ")[0]! });
      const armed = daemon;
      for (const [text, expected] of script) {
        say(sandbox, text);
        // Until the bot said what it should have, restarting once if the armed daemon killed itself.
        await expect
          .poll(
            async () => {
              const gone = armed.child.exitCode !== null || armed.child.signalCode !== null;
              if (gone && daemon === armed) daemon = await start();
              return botSaid(sandbox);
            },
            { timeout: 30_000 },
          )
          .toEqual(expected);
      }
      // The point was reached: the armed daemon killed itself there.
      expect(await armed.exited).toEqual({ code: null, signal: "SIGKILL" });
      expect(daemon).not.toBe(armed);
      await expectDialogDone(sandbox, daemon, backend, script.at(-1)![1]);
    },
  );

  it("killed right after an answer's append, the person says something while it is down: the dialog runs once", {
    timeout: 60_000,
  }, async () => {
    const { sandbox, backend, start } = await setUpDialogDaemon(backendFor);
    const armed = await start({ BOTHOST_FAILPOINTS: "answer-logged@1" });
    say(sandbox, "standup");
    await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(QUESTIONS.slice(0, 1));
    say(sandbox, "did a");
    expect(await armed.exited).toEqual({ code: null, signal: "SIGKILL" });
    // Sent while no daemon runs: caught up at the start, beside the dialog that holds an answer.
    say(sandbox, "hello");
    const daemon = await start();
    const ordinary = "I don't know the command `hello`. Say `help` for the list.";
    await expect
      .poll(() => botSaid(sandbox), { timeout: 15_000 })
      .toEqual([...QUESTIONS.slice(0, 2), ordinary]);
    say(sandbox, "do b");
    const [q1, q2, q3] = QUESTIONS as [string, string, string];
    await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual([q1, q2, ordinary, q3]);
    say(sandbox, "none");
    const done = [q1, q2, ordinary, q3, SUMMARY];
    await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(done);
    await expectDialogDone(sandbox, daemon, backend, done);
  });
});
