/**
 * Durable dialogs through real processes: `bothost run` killed with SIGKILL after each message of
 * a three-question dialog (at once, and a few ms later), stopped with SIGTERM while a question
 * waits (no run is left for the stop to wait for) and answered while no daemon runs. Each question
 * is asked once, each answer lands under its question, the dialog's state write is made once.
 * On the file store, and on Redis when one answers (else skipped with one line saying why).
 * Failover and an outage, which need Redis, are in dialog-crash-redis.test.ts.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { casesOn, crashBackends } from "../support/crash-backends.ts";
import {
  BOT,
  doneCount,
  expectDialogDone,
  QUESTIONS,
  SUMMARY,
  setUpDialogDaemon,
} from "../support/dialog-daemon.ts";
import { botSaid, sayToBot as say, useE2eCleanup } from "../support/e2e-daemon.ts";

useE2eCleanup();

const backends = await crashBackends("dialog-crash");

describe.each(backends)("on the %s", (name, backendFor) => {
  // On Redis, 0 ms: the kill comes before the answer's commit, or right after it.
  it.each(casesOn(name, [0, 25], (delayMs) => delayMs === 0))(
    "SIGKILL %i ms after each message of the dialog: each question once, each answer in place",
    { timeout: 120_000 },
    async (delayMs) => {
      {
        const { sandbox, backend, start } = await setUpDialogDaemon(backendFor);
        const said = ["standup", "did a", "do b", "none"];
        let daemon = await start();
        for (const [i, text] of said.entries()) {
          say(sandbox, text);
          if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
          daemon.kill("SIGKILL");
          await daemon.exited;
          daemon = await start();
          const expected = [...QUESTIONS.slice(0, i + 1), ...(i === 3 ? [SUMMARY] : [])];
          await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(expected);
        }
        // The summary may be the killed daemon's, its end left to this one: a message after it
        // in the conversation is handled once the dialog is over.
        await expectDialogDone(sandbox, daemon, backend);
      }
    },
  );

  it("SIGTERM while a question waits, no handler held by it; the answer sent while no daemon runs is taken at the next start", {
    timeout: 60_000,
  }, async () => {
    // A handler timeout longer than any wait here: a run held by its waiting question would hold
    // the stop until the shutdown deadline cuts it, whatever the machine's pace.
    const { sandbox, backend, start } = await setUpDialogDaemon(backendFor, BOT, "1h");
    let daemon = await start();
    say(sandbox, "standup");
    await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(QUESTIONS.slice(0, 1));
    say(sandbox, "did a");
    await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(QUESTIONS.slice(0, 2));
    daemon.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    // The runs that asked ended when their questions waited: the stop cut none of them.
    expect(daemon.logs().find((l) => l.msg === "daemon stopped")).toMatchObject({ abandoned: 0 });
    say(sandbox, "do b");
    daemon = await start();
    await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(QUESTIONS);
    say(sandbox, "none");
    await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual([...QUESTIONS, SUMMARY]);
    say(sandbox, "ping");
    await expect.poll(() => botSaid(sandbox).at(-1), { timeout: 15_000 }).toBe(`pong ${daemon.pid}`);
    daemon.kill("SIGTERM");
    await daemon.exited;
    expect(await doneCount(backend)).toBe(1);
  });
});

describe("bothost reload", () => {
  const edit = async (file: string, from: string, to: string) =>
    writeFile(file, (await readFile(file, "utf8")).replace(from, to));

  it("restarts the bot with new code; its waiting dialog goes on, or stops when its question changed", async () => {
    const fileStore = backends[0]![1];
    for (const changeQuestion of [false, true]) {
      const { sandbox, start, dir } = await setUpDialogDaemon(fileStore, "$DIR/standup.mjs");
      const module = path.join(dir, "standup.mjs");
      const daemon = await start();
      say(sandbox, "standup");
      // An answer follows its question (a message sent before it is an ordinary one).
      await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(QUESTIONS.slice(0, 1));
      say(sandbox, "did a");
      await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(QUESTIONS.slice(0, 2));
      if (changeQuestion) await edit(module, '"Q2 today?"', '"Q2 what is the plan?"');
      else await edit(module, "pong ${process.pid}", "pong again ${process.pid}");
      daemon.kill("SIGHUP");
      expect(await daemon.waitForLog((l) => l.msg === "config reloaded")).toMatchObject({
        restarted: ["standup"],
      });
      say(sandbox, "do b");
      if (changeQuestion) {
        await expect
          .poll(() => botSaid(sandbox).at(-1), { timeout: 15_000 })
          .toMatch(/updated in the middle/);
        expect(daemon.logs().some((l) => l.step === 2 && String(l.msg).includes("no longer matches"))).toBe(
          true,
        );
      } else {
        await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(QUESTIONS);
        say(sandbox, "none");
        await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual([...QUESTIONS, SUMMARY]);
      }
      daemon.kill("SIGTERM");
      expect(await daemon.exited).toEqual({ code: 0, signal: null });
    }
  }, 60_000);
});
