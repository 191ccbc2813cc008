/**
 * The testing kit's core: run one bot against a sandbox in this process, post as a user, and
 * await what the bot answers. The bot runs in a real daemon (the same dispatch, helpers and
 * retries as `bothost run`) speaking real HTTP to the sandbox.
 */

import type { BotDefinition } from "../bot/define-bot.ts";
import { botNameProblem } from "../config/schema-fields.ts";
import { failureWords } from "../daemon/status-of.ts";
import { BothostError } from "../errors/bothost-error.ts";
import type { Sandbox, SendAsInput } from "../sandbox/types.ts";
import { accountTurns } from "./account-turns.ts";
import { AskClaims, sameConversation } from "./ask-claims.ts";
import { type NameHold, nameHold } from "./bot-names.ts";
import { deliverScheduled, jobsDone, nextDelivery } from "./deliver-scheduled.ts";
import { failedRun, finalLetter, letterKept } from "./final-failure.ts";
import { type InProcessDaemon, startInProcessDaemon } from "./in-process-daemon.ts";
import { LISTENER, sendWebhook } from "./inbound-webhook.ts";
import {
  checkAccount,
  checkFrom,
  checkInput,
  checkMessageId,
  checkReact,
  checkRunBotArguments,
  checkStopOptions,
  checkWaitOptions,
  checkWebhookRequest,
  definitionOf,
  kitError,
} from "./kit-arguments.ts";
import { kitFacing, withoutKitFrames } from "./kit-frames.ts";
import { checkOutgoingOptions, outgoingMode } from "./outgoing-webhook.ts";
import { progressView } from "./progress-view.ts";
import { reactAs } from "./react-as.ts";
import { newStateFolder, wipe } from "./state-folders.ts";
import { keptDialogs } from "./stopped-dialogs.ts";
import { DEFAULT_WAIT_MS, type NextReplyOptions, type RunBotOptions, type TestBot } from "./test-bot.ts";
import type { TestMessage } from "./test-message.ts";
import {
  describeMessage,
  handlerFailure,
  notReached,
  refusedByWhere,
  refusedSend,
  silentBecause,
} from "./wait-messages.ts";

export {
  DEFAULT_WAIT_MS,
  type NextReplyOptions,
  type ReactAs,
  type RunBotOptions,
  type TestBot,
} from "./test-bot.ts";

/**
 * @example
 * ```ts
 * const sandbox = await startSandbox();
 * const bot = await runBot(sandbox, { bot: echo, settings: { prefix: "echo: " } });
 * const reply = await bot.ask("member@sandbox.example", { type: "direct", to: [bot.email], content: "hi" });
 * expect(reply.content).toBe("echo: hi");
 * await bot.stop({ wipe: true });
 * ```
 */
export async function runBot(sandbox: Sandbox, options: RunBotOptions): Promise<TestBot> {
  try {
    return kitFacing(await heldRunBot(sandbox, options));
  } catch (err) {
    throw withoutKitFrames(err);
  }
}

/** runBot, its errors as the kit's code raised them. */
async function heldRunBot(sandbox: Sandbox, options: RunBotOptions): Promise<TestBot> {
  checkRunBotArguments(sandbox, options);
  const name = options.name ?? "bot";
  const badName = botNameProblem(name);
  if (badName) throw kitError(`runBot: name ${badName}`);
  const email = options.email ?? `${name}-bot@sandbox.example`;
  // Taken before anything waits, so that two runBot calls at once cannot both take it.
  const hold = nameHold(sandbox, name, email);
  hold.take("runBot");
  try {
    return await startBot(sandbox, options, name, email, hold);
  } catch (err) {
    hold.release();
    throw err;
  }
}

/** runBot once its name is held: the bot started, and what a test calls on it. */
async function startBot(
  sandbox: Sandbox,
  options: RunBotOptions,
  name: string,
  email: string,
  hold: NameHold,
): Promise<TestBot> {
  checkOutgoingOptions(options.outgoingWebhook, options.config);
  const definition = await definitionOf(options.bot, name, "runBot");
  const control = sandbox.control;
  if (!control.users().some((u) => u.email === email)) {
    const owner = control.users().find((u) => u.role === 100 && !u.is_bot)?.email;
    const channels = options.channels ?? ["general"];
    try {
      control.createUser({
        email,
        full_name: name,
        bot: options.outgoingWebhook ? "outgoing" : "generic",
        ...(owner ? { owner } : {}),
        channels,
      });
    } catch (err) {
      // The default channel is not in every org: say which option gives the bot's channels.
      throw kitError(
        `runBot: the org has no account ${email}, so one is made in the channels ${JSON.stringify(channels)}: ${(err as Error).message} Give the org's channels with \`channels\`, or an email the org has.`,
      );
    }
  }
  const userId = control.users().find((u) => u.email === email)!.user_id;
  // The account's messages from now until another bot takes it are this bot's (and those it scheduled).
  const turns = accountTurns(sandbox, email, userId, {});
  turns.begin();
  if (options.clock && Math.abs(options.clock.now() - control.now()) > 1_000) {
    throw kitError(
      "runBot: the clock is not the sandbox's; start the sandbox with startSandbox({ clock }) too",
    );
  }
  const { outgoingWebhook: outgoing } = options;
  const webhook = outgoing
    ? outgoingMode(control, name, email, outgoing === true ? {} : outgoing)
    : undefined;
  // Kept across stops and restarts, removed by stop({ wipe: true }) (or at the process's exit).
  const stateDir = await newStateFolder();
  let wiped = false;
  const logs: Record<string, unknown>[] = [];
  const requestsBefore = control.requests.length;
  const launch = async (bot: BotDefinition<never, never>): Promise<InProcessDaemon> => {
    const started = await startInProcessDaemon(
      sandbox,
      {
        [name]: {
          email,
          definition: bot,
          ...(options.settings !== undefined ? { settings: options.settings } : {}),
          ...(options.config?.trim() ? { extra: options.config.trim() } : {}),
          ...(webhook ? { generated: webhook.entry } : {}),
        },
      },
      {
        stateDir,
        logs,
        ...(options.daemon?.trim() ? { daemon: options.daemon.trim() } : {}),
        ...(options.clock ? { clock: options.clock } : {}),
        ...(webhook
          ? { global: webhook.global, env: webhook.env }
          : options.webhooks
            ? { global: LISTENER }
            : {}),
      },
    );
    const { authFailed, failed } = started.report;
    if (authFailed.length + failed.length > 0) {
      await started.stop();
      wiped = true;
      await wipe(stateDir);
      const why = failed[0]?.error;
      // What the setup threw and where in the test's own code, as `bothost check` says it.
      const message = `the bot did not start: ${failed[0] ? failureWords(why) : "its credentials were rejected"}`;
      const cause = failed[0] ? { cause: why } : undefined;
      // The setup's code kept (BOT_SETUP_INVALID, …), so that a test can tell why by it.
      throw why instanceof BothostError
        ? new BothostError(why.code, message, cause)
        : new Error(message, cause);
    }
    webhook?.point(started);
    return started;
  };
  // The version running: restart({ bot }) replaces it for later starts too.
  let current = definition as BotDefinition<never, never>;
  // The daemon running now (undefined while stopped) and the last one started (its ledger view).
  let running: InProcessDaemon | undefined = await launch(current);
  let last = running;
  let kept: ReturnType<TestBot["dialogs"]> = [];
  const runtimeNow = () => running?.daemon.bots.find((b) => b.name === name);
  const scheduler = () => runtimeNow()?.scheduler;
  const deliver = options.clock?.onAdvance(
    deliverScheduled(control, userId, scheduler, DEFAULT_WAIT_MS),
    () => nextDelivery(control),
  );
  const jobs = options.clock?.afterEachTimer(jobsDone(scheduler, DEFAULT_WAIT_MS));
  const view = (id: number) => control.messageView(id);
  const mine = () => turns.sent().map((m) => view(m.id as number)!);
  const firstAfter = (after: number, where: ((m: TestMessage) => boolean) | undefined) => {
    for (const m of turns.sent()) {
      if ((m.id as number) <= after) continue;
      const message = view(m.id as number)!;
      if (where === undefined || where(message)) return message;
    }
    return undefined;
  };
  const unreached = (id: number) => notReached(control, userId, id, webhook);
  /** `why` replaces the reason the kit finds; `refused` (what `where` refused) follows it. */
  const silence = async (after: number, timeoutMs: number, why = "", sought = "message", refused = "") => {
    const what = after > 0 ? ` after ${describeMessage(control, after)}` : "";
    // The bot's own messages are recorded as handled too (skipped): not "handled" for the reader,
    // nor a message that could not reach it.
    const theirs = after > 0 && view(after)?.sender_id !== userId;
    // Not said handled without answering when it answered and `where` refused the answers.
    const recorded = theirs && refused === "" && last.ledger.recorded(name, after);
    const state =
      why ||
      (after > 0 && !view(after) ? ` (the sandbox has no message ${after})` : "") ||
      (theirs ? await failedRun(running, logs, name, after, recorded) : "") ||
      (recorded ? " (it handled that message without answering)" : "") ||
      silentBecause(control, {
        email,
        stopped: running === undefined,
        since: requestsBefore,
        unreached: theirs ? unreached(after) : undefined,
        budget: runtimeNow()?.status.budget,
        testClock: options.clock !== undefined,
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
      const refused = refusedByWhere(mine().filter((m) => m.id > after));
      throw await silence(after, timeoutMs, "", "message that `where` accepts", refused);
    }
  };
  const claims = new AskClaims();
  const accounts = () => control.users().map((u) => u.email);
  /** Posts as `from` (post, ask: `where`), the input checked first. */
  const send = (from: string, input: SendAsInput, where: string) => {
    checkFrom(from, where);
    checkAccount(accounts(), from, where, "who posts");
    checkInput(input, where);
    try {
      return control.sendAs(from, input).id;
    } catch (err) {
      throw refusedSend(err, where, from);
    }
  };
  const ask = async (from: string, input: SendAsInput, options?: { timeoutMs?: number }) => {
    checkWaitOptions(options, "ask", ["timeoutMs"]);
    const { timeoutMs = DEFAULT_WAIT_MS } = options ?? {};
    const claim = claims.open(view(send(from, input, "ask"))!);
    const sent = () => {
      const floor = claims.floor();
      return turns
        .sent()
        .filter((m) => (m.id as number) > floor)
        .map((m) => view(m.id as number)!);
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
  /** Waits as {@link TestBot.handled} does; why its handler failed, when it was kept as a dead letter. */
  const settled = async (messageId: number, where: string, options?: { timeoutMs?: number }) => {
    checkMessageId(messageId, where);
    const { timeoutMs = DEFAULT_WAIT_MS } = options ?? {};
    const daemon = running;
    if (!daemon) throw new Error(`${name} is stopped: start() it before waiting for a message to be handled`);
    const record = control.messages().find((m) => m.id === messageId);
    if (!record) throw new Error(`${where}: the sandbox has no message ${messageId}`);
    const what = describeMessage(control, messageId);
    // A delivery the server gave up on is lost, unless the bot handled it or keeps it (a run a stop cut).
    const open = webhook && !daemon.ledger.recorded(name, messageId);
    const lost = open && !(await letterKept(daemon, name, messageId)) ? webhook.failed(messageId) : undefined;
    const notSent = unreached(messageId) ?? lost;
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
      const why = running === daemon ? "" : `: ${name} is stopped, and replays it at its next start`;
      return new Error(`${name} did not finish replaying ${what} within ${timeoutMs} ms${why}`);
    });
    return letter
      ? `${name}'s handler failed on ${what} (${letter.attempts} attempt${letter.attempts === 1 ? "" : "s"}, kept as dead letter ${letter.id}): ${letter.error.message}`
      : undefined;
  };
  const handled = async (messageId: number, options?: { timeoutMs?: number }) => {
    checkWaitOptions(options, "handled", ["timeoutMs"]);
    const failed = await settled(messageId, "handled", options);
    if (failed !== undefined) throw new Error(failed);
  };
  const stop = async ({ crash = false, wipe: wipeState = false } = {}) => {
    const daemon = running;
    running = undefined;
    // On a held clock no stop deadline would pass: a handler still running would hold the stop.
    // A wipe deletes whatever a handler still running would record: no need to wait for it.
    const cut = crash || wipeState || options.clock?.held === true;
    await daemon?.stop({ ...(cut ? { deadlineMs: 0 } : {}), keepState: true });
    if (daemon && !wipeState) kept = await keptDialogs(stateDir, name); // what dialogs() lists while stopped
    hold.release();
    if (wipeState && !wiped) {
      wiped = true;
      deliver?.();
      jobs?.();
      await wipe(stateDir);
    }
  };
  const start = async () => {
    if (wiped) throw kitError(`${name} cannot start: stop({ wipe: true }) deleted its state`);
    if (running) throw kitError(`${name} is running: stop() it before start()`);
    hold.take("start");
    turns.begin();
    try {
      running = await launch(current);
    } catch (err) {
      hold.release();
      throw err;
    }
    last = running;
  };
  return {
    name,
    email,
    userId,
    post: (from, input) => send(from, input, "post"),
    nextReply,
    ask,
    handled,
    react: async (message, emoji, options) => {
      checkReact(message, options);
      checkAccount(accounts(), options.as, "react", "who reacts");
      const id = typeof message === "number" ? message : message.id;
      await reactAs(sandbox, options.as, id, emoji, options.remove ?? false);
    },
    progress: async (asked, options) => {
      checkWaitOptions(options, "progress", ["timeoutMs", "movedNote"]);
      const { movedNote, ...o } = options ?? {};
      const failed = await settled(asked, "progress", o);
      const question = view(asked)!;
      const answers = mine().filter((m) => m.id > asked && sameConversation(m, question));
      return progressView(control, answers, movedNote, failed);
    },
    webhook: async (hook, request) => {
      checkWebhookRequest(request);
      return sendWebhook(running, name, hook, request);
    },
    replies: mine,
    dialogs: () => (running ? (runtimeNow()?.dialogs() ?? []) : wiped ? [] : kept),
    logs: () => logs,
    restart: async (options) => {
      checkStopOptions(options, "restart", ["crash", "bot"]);
      const { crash = false, bot } = options ?? {};
      // Checked (and loaded) first: a value that is no bot leaves the bot running as it was.
      const next = bot ? ((await definitionOf(bot, name, "restart")) as typeof current) : current;
      await stop({ crash });
      current = next;
      await start();
    },
    stop: async (options) => {
      checkStopOptions(options, "stop", ["crash", "wipe"]);
      await stop(options);
    },
    start,
  };
}
