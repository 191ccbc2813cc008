/**
 * The kit's waits for a message to be handled (`handled`, `progress`): until the bot recorded it
 * handled and its dialogs' runs on it are over, saying why when it never reached the bot, or why
 * its handler failed when it was kept as a dead letter.
 */
import { sameConversation } from "./ask-claims.ts";
import { type BotRun, sentBy, unreached, viewOf } from "./bot-run.ts";
import { finalLetter, letterKept } from "./final-failure.ts";
import { checkMessageId, checkWaitOptions } from "./kit-arguments.ts";
import { progressView } from "./progress-view.ts";
import { DEFAULT_WAIT_MS, type TestBot } from "./test-bot.ts";
import { describeMessage, handlerFailure } from "./wait-messages.ts";

export function handledWaits(run: BotRun): Pick<TestBot, "handled" | "progress"> {
  const { control, name, userId, webhook } = run;
  /** Waits as {@link TestBot.handled} does; why its handler failed, when it was kept as a dead letter. */
  const settled = async (messageId: number, where: string, options?: { timeoutMs?: number }) => {
    checkMessageId(messageId, where);
    const { timeoutMs = DEFAULT_WAIT_MS } = options ?? {};
    const daemon = run.running();
    if (!daemon) throw new Error(`${name} is stopped: start() it before waiting for a message to be handled`);
    const record = control.messages().find((m) => m.id === messageId);
    if (!record) throw new Error(`${where}: the sandbox has no message ${messageId}`);
    const what = describeMessage(control, messageId);
    // A delivery the server gave up on is lost, unless the bot handled it or keeps it (a run a stop cut).
    const open = webhook && !daemon.ledger.recorded(name, messageId);
    const lost = open && !(await letterKept(daemon, name, messageId)) ? webhook.failed(messageId) : undefined;
    const notSent = unreached(run, messageId) ?? lost;
    if (notSent) throw new Error(`${what} never reached ${name}: ${notSent}`);
    const runtime = daemon.daemon.bots.find((b) => b.name === name);
    if (runtime && !runtime.receives("message"))
      throw new Error(`${what} never reached ${name}: its queue takes no message events (it handles none)`);
    // An answer to a prompt is marked handled once recorded: the dialog's run on it comes after.
    // The bot's own question: a press on its button answers it, recorded under the question.
    const question = record.sender_id === userId;
    const after = (signal: AbortSignal) =>
      runtime?.answerRunsOver(messageId, signal, question) ?? Promise.resolve(true);
    await daemon.ledger.until(
      name,
      messageId,
      timeoutMs,
      () => {
        const failure = handlerFailure(daemon.logs, messageId);
        const why = failure
          ? `: its handler failed (${failure}) and runs again after a pause`
          : question
            ? ` (it is ${name}'s own message: handled() of a question waits until it is answered, timed out or ended; to wait for the run that asked it, give the id of the message that led to it)`
            : "";
        return new Error(`${name} did not finish handling ${what} within ${timeoutMs} ms${why}`);
      },
      after,
    );
    const letter = await finalLetter(daemon, name, messageId, timeoutMs, () => {
      const why = run.running() === daemon ? "" : `: ${name} is stopped, and replays it at its next start`;
      return new Error(`${name} did not finish replaying ${what} within ${timeoutMs} ms${why}`);
    });
    return letter
      ? `${name}'s handler failed on ${what} (${letter.attempts} attempt${letter.attempts === 1 ? "" : "s"}, kept as dead letter ${letter.id}): ${letter.error.message}`
      : undefined;
  };
  return {
    handled: async (messageId, options) => {
      checkWaitOptions(options, "handled", ["timeoutMs"]);
      const failed = await settled(messageId, "handled", options);
      if (failed !== undefined) throw new Error(failed);
    },
    progress: async (asked, options) => {
      checkWaitOptions(options, "progress", ["timeoutMs", "movedNote"]);
      const { movedNote, ...o } = options ?? {};
      const failed = await settled(asked, "progress", o);
      const question = viewOf(run, asked)!;
      const answers = sentBy(run).filter((m) => m.id > asked && sameConversation(m, question));
      return progressView(control, answers, movedNote, failed);
    },
  };
}
