/**
 * The kit's waits for what a bot sends (`nextReply`, `ask`), and what a wait that times out says:
 * why the bot was silent, in the words of what the test can change.
 */
import type { SendAsInput } from "../sandbox/types.ts";
import { AskClaims } from "./ask-claims.ts";
import { type BotRun, runtimeOf, sentBy, unreached, viewOf } from "./bot-run.ts";
import { failedRun } from "./final-failure.ts";
import { checkWaitOptions } from "./kit-arguments.ts";
import { DEFAULT_WAIT_MS, type NextReplyOptions } from "./test-bot.ts";
import type { TestMessage } from "./test-message.ts";
import { describeMessage, refusedByWhere, silentBecause } from "./wait-messages.ts";

/** `post`: posts as `from` (its input checked), for `ask`; returns the message's id. */
export function replyWaits(run: BotRun, post: (from: string, input: SendAsInput, where: string) => number) {
  const { control, name, userId } = run;
  const firstAfter = (after: number, where: ((m: TestMessage) => boolean) | undefined) => {
    for (const m of run.turns.sent()) {
      if ((m.id as number) <= after) continue;
      const message = viewOf(run, m.id as number)!;
      if (where === undefined || where(message)) return message;
    }
    return undefined;
  };
  /** `why` replaces the reason the kit finds; `refused` (what `where` refused) follows it. */
  const silence = async (after: number, timeoutMs: number, why = "", sought = "message", refused = "") => {
    const what = after > 0 ? ` after ${describeMessage(control, after)}` : "";
    // The bot's own messages are recorded as handled too (skipped): not "handled" for the reader,
    // nor a message that could not reach it.
    const theirs = after > 0 && viewOf(run, after)?.sender_id !== userId;
    // Not said handled without answering when it answered and `where` refused the answers.
    const recorded = theirs && refused === "" && run.last().ledger.recorded(name, after);
    const state =
      why ||
      (after > 0 && !viewOf(run, after) ? ` (the sandbox has no message ${after})` : "") ||
      (theirs ? await failedRun(run.running(), run.logs, name, after, recorded) : "") ||
      (recorded ? " (it handled that message without answering)" : "") ||
      silentBecause(control, {
        email: run.email,
        stopped: run.running() === undefined,
        since: run.requestsBefore,
        unreached: theirs ? unreached(run, after) : undefined,
        budget: runtimeOf(run)?.status.budget,
        testClock: run.testClock,
      });
    return new Error(`${name} sent no ${sought}${what} within ${timeoutMs} ms${state}${refused}`);
  };
  const nextReply = async (options?: NextReplyOptions) => {
    checkWaitOptions(options, "nextReply", ["after", "timeoutMs", "where"]);
    const { after = 0, timeoutMs = DEFAULT_WAIT_MS, where } = options ?? {};
    try {
      return await control.waitFor(() => firstAfter(after, where), { timeoutMs });
    } catch {
      if (!where) throw await silence(after, timeoutMs);
      const refused = refusedByWhere(sentBy(run).filter((m) => m.id > after));
      throw await silence(after, timeoutMs, "", "message that `where` accepts", refused);
    }
  };
  const claims = new AskClaims();
  const ask = async (from: string, input: SendAsInput, options?: { timeoutMs?: number }) => {
    checkWaitOptions(options, "ask", ["timeoutMs"]);
    const { timeoutMs = DEFAULT_WAIT_MS } = options ?? {};
    const claim = claims.open(viewOf(run, post(from, input, "ask"))!);
    const sent = () => {
      const floor = claims.floor();
      return run.turns
        .sent()
        .filter((m) => (m.id as number) > floor)
        .map((m) => viewOf(run, m.id as number)!);
    };
    try {
      return await control.waitFor(() => claims.take(claim, sent()), { timeoutMs });
    } catch {
      const taken = claims.giveUp(claim, sent());
      const why =
        taken.length > 0
          ? ` (its messages there after it, ${taken.join(", ")}, answered earlier asks)`
          : claim.asked.sender_id === userId
            ? ` (it was posted as ${name} itself: a bot handles none of its own messages)`
            : "";
      throw await silence(claim.asked.id, timeoutMs, why);
    }
  };
  return { nextReply, ask };
}
