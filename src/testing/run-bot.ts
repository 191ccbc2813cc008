/**
 * The testing kit's core: run one bot against a sandbox in this process, post as a user, and
 * await what the bot answers. The bot runs in a real daemon (the same dispatch, helpers and
 * retries as `bothost run`) speaking real HTTP to the sandbox. Here: its account, its starts and
 * stops; the waits for its answers are reply-waits.ts's, those for a message handled handled-waits.ts's.
 */

import type { BotDefinition } from "../bot/define-bot.ts";
import { botNameProblem } from "../config/schema-fields.ts";
import { failureWords } from "../daemon/status-of.ts";
import { BothostError } from "../errors/bothost-error.ts";
import type { Sandbox, SendAsInput } from "../sandbox/types.ts";
import { accountTurns } from "./account-turns.ts";
import { type NameHold, nameHold } from "./bot-names.ts";
import { type BotRun, runtimeOf, sentBy } from "./bot-run.ts";
import { deliverScheduled, jobsDone, nextDelivery } from "./deliver-scheduled.ts";
import { handledWaits } from "./handled-waits.ts";
import { type InProcessDaemon, startInProcessDaemon } from "./in-process-daemon.ts";
import { LISTENER, sendWebhook } from "./inbound-webhook.ts";
import {
  checkAccount,
  checkFrom,
  checkInput,
  checkReact,
  checkRunBotArguments,
  checkStopOptions,
  checkWebhookRequest,
  definitionOf,
  kitError,
} from "./kit-arguments.ts";
import { kitFacing, withoutKitFrames } from "./kit-frames.ts";
import { checkOutgoingOptions, outgoingMode } from "./outgoing-webhook.ts";
import { reactAs } from "./react-as.ts";
import { replyWaits } from "./reply-waits.ts";
import { newStateFolder, wipe } from "./state-folders.ts";
import { keptDialogs } from "./stopped-dialogs.ts";
import { DEFAULT_WAIT_MS, type RunBotOptions, type TestBot } from "./test-bot.ts";
import { refusedSend } from "./wait-messages.ts";

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
  const run: BotRun = {
    name,
    email,
    userId,
    control,
    turns,
    logs,
    webhook,
    testClock: options.clock !== undefined,
    requestsBefore,
    running: () => running,
    last: () => last,
  };
  const scheduler = () => runtimeOf(run)?.scheduler;
  const deliver = options.clock?.onAdvance(
    deliverScheduled(control, userId, scheduler, DEFAULT_WAIT_MS),
    () => nextDelivery(control),
  );
  const jobs = options.clock?.afterEachTimer(jobsDone(scheduler, DEFAULT_WAIT_MS));
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
  const { nextReply, ask } = replyWaits(run, send);
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
    ...handledWaits(run),
    react: async (message, emoji, options) => {
      checkReact(message, options);
      checkAccount(accounts(), options.as, "react", "who reacts");
      const id = typeof message === "number" ? message : message.id;
      await reactAs(sandbox, options.as, id, emoji, options.remove ?? false);
    },
    webhook: async (hook, request) => {
      checkWebhookRequest(request);
      return sendWebhook(running, name, hook, request);
    },
    replies: () => sentBy(run),
    dialogs: () => (running ? (runtimeOf(run)?.dialogs() ?? []) : wiped ? [] : kept),
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
