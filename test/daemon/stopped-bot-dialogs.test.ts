/**
 * A bot stopped in a running daemon (as a lost lease stops it) while a dialog's answer was being
 * handled: nothing runs that dialog until the bot's next start, and the status (its JSON, its text,
 * the status page) and `bothost dialogs` say so, in the words `bothost dialogs` uses without a
 * daemon, not "being handled". Ended there (the admin route), the end is recorded for the next
 * start, which tells the person, not answered as a run under way. A real daemon in this process
 * against the sandbox over HTTP.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { request } from "undici";
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { formatStatus } from "../../src/cli/status.ts";
import { dialogDesk } from "../../src/daemon/dialog-desk.ts";
import { renderStatusPage } from "../../src/http/status-page.ts";
import { assertBuilt, runCli } from "../support/cli.ts";
import { deferred } from "../support/deferred.ts";
import { type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { saidAtLeast } from "../support/self-killing-bot.ts";

const BOT = "tally-bot@sandbox.example";
const NEXT = "answer or deadline recorded: runs at the next start";

/** Holds the run the answer started, past the bot's stop (a new one for each case). */
let slow = deferred();

const tally = defineBot({
  setup(bot) {
    bot.command("tally", async (ctx) => {
      const size = await ctx.prompt("Which size?");
      await slow.promise;
      await ctx.reply(`One ${size.text}.`);
    });
  },
});

let up: GatedDaemon | undefined;
afterEach(async () => {
  slow.resolve();
  await up?.close();
  slow = deferred();
});

/**
 * The tally bot in a daemon (its admin routes over HTTP), asked, its answer's run under way, then
 * stopped alone, its run cut off (as a lost lease stops it): the daemon goes on.
 */
async function stoppedMidAnswer(gated: GatedDaemon) {
  const bot = gated.running.daemon.bots[0]!;
  gated.dm("tally");
  expect(await saidAtLeast(gated.sandbox, BOT, 1)).toEqual(["Which size?"]);
  await expect
    .poll(() => bot.dialogs().map((d) => d.deadline !== undefined), { timeout: 15_000 })
    .toEqual([true]);
  gated.dm("large");
  // The run that took "large" is under way: being handled while the bot runs.
  await expect
    .poll(() => bot.dialogs().map((d) => [d.deadline, d.nextStart]))
    .toEqual([[undefined, undefined]]);
  await bot.stop(0, "its lease was lost");
  return bot;
}

const startTally = () =>
  startGatedDaemon({
    name: "tally",
    email: BOT,
    fullName: "Tally",
    definition: tally,
    extra: "handler_timeout: 1h",
    global: "http:\n  listen: 127.0.0.1:0",
  });

it("lists the dialog of a stopped bot whose answer is recorded as run at the next start", async () => {
  up = await startTally();
  const { running } = up;
  await stoppedMidAnswer(up);
  const status = await running.daemon.status();
  const [shown] = status.bots;
  expect(shown!.state).toBe("stopped");
  expect(shown!.dialogs.list.map((d) => d.nextStart)).toEqual([true]);
  expect(formatStatus(status)).toContain(`(${NEXT})`);
  expect(formatStatus(status)).not.toContain("being handled");
  expect(renderStatusPage(status)).toContain(`, ${NEXT}</li>`);
  expect(await dialogDesk(running.daemon.bots).dialogs()).toMatchObject([
    { bot: "tally", stopped: true, dialogs: [{ nextStart: true }] },
  ]);
});

/** Ends the stopped bot's dialog through the admin route: answered as told at the next start. */
async function endStopped(gated: GatedDaemon, bot: StoppedBot) {
  const id = bot.dialogs()[0]!.id;
  const ended = await request(`${gated.running.daemon.http!.url}/admin/dialogs/tally/${id}/end`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  expect([ended.statusCode, await ended.body.json()]).toEqual([
    200,
    { ended: true, bot: "tally", id, nextStart: true },
  ]);
  expect(bot.dialogs()).toEqual([]);
  slow.resolve();
}

type StoppedBot = Awaited<ReturnType<typeof stoppedMidAnswer>>;

const botSaid = (gated: GatedDaemon) => {
  const { control } = gated.sandbox;
  const self = control.users().find((u) => u.email === BOT)!.user_id;
  return control
    .messages()
    .filter((m) => m.sender_id === self)
    .map((m) => m.content);
};

it("ends a stopped bot's dialog in the store, its note said at the next start, not at the daemon's stop", async () => {
  up = await startTally();
  await endStopped(up, await stoppedMidAnswer(up));
  // Nothing runs the bot here: the note waits for its next start, which says it once. The
  // daemon's stop (its queues drained) says nothing for it.
  let whileDown: unknown[] = [];
  await up.restart(() => {
    whileDown = botSaid(up!);
  });
  expect(whileDown).toEqual(["Which size?"]);
  await expect
    .poll(() => botSaid(up!), { timeout: 10_000 })
    .toEqual(["Which size?", "An operator ended this conversation."]);
  expect(up.running.daemon.bots[0]!.dialogs()).toEqual([]);
});

it("says the note of a stopped bot's ended dialog once, when the bot starts again in the same daemon", async () => {
  up = await startTally();
  const bot = await stoppedMidAnswer(up);
  await endStopped(up, bot);
  // Its next start here (its lease taken back) reads the note from the dialog's header.
  await bot.start();
  await expect
    .poll(() => botSaid(up!), { timeout: 10_000 })
    .toEqual(["Which size?", "An operator ended this conversation."]);
  // Said by the start alone: the daemon's stop adds nothing.
  await up.restart();
  expect(botSaid(up)).toEqual(["Which size?", "An operator ended this conversation."]);
});

/** `bothost dialogs` (text, and --json) run against the daemon over its HTTP listener. */
async function cliDialogs(gated: GatedDaemon) {
  assertBuilt();
  const file = join(gated.dir, "cli.yaml");
  const { port } = new URL(gated.running.daemon.http!.url!);
  await writeFile(
    file,
    `server:\n  url: ${gated.sandbox.url}\nstate:\n  path: ${gated.running.stateDir}\nhttp:\n  listen: 127.0.0.1:${port}\n` +
      `bots:\n  tally:\n    module: ./x.ts\n    email: ${BOT}\n    api_key: any-key-0123456789\n`,
  );
  const [json, text] = await Promise.all([
    runCli(["dialogs", "--json", "-c", file]),
    runCli(["dialogs", "-c", file]),
  ]);
  expect([json.code, text.code, json.stderr + text.stderr]).toEqual([0, 0, ""]);
  return { json: JSON.parse(json.stdout) as unknown, text: text.stdout };
}

/** The member's pending note of dialog `id`, as the offline listing gives it. */
const noteOf = (gated: GatedDaemon, id: string) => {
  const member = gated.sandbox.control.users().find((u) => u.email === "member@sandbox.example")!;
  return {
    id,
    userId: member.user_id,
    userName: member.full_name,
    where: "direct message",
    ended: "operator",
    endedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/),
  };
};

it("lists the end note a stopped bot says at its next start, in bothost dialogs and bothost status, as the offline listing does", {
  timeout: 30_000,
}, async () => {
  up = await startTally();
  const bot = await stoppedMidAnswer(up);
  const id = bot.dialogs()[0]!.id;
  await endStopped(up, bot);
  const { json, text } = await cliDialogs(up);
  expect(json).toEqual([{ bot: "tally", dialogs: [], stopped: true, notes: [noteOf(up, id)] }]);
  const row = new RegExp(`^ {2}${id} +Mel Member +direct message +\\S+Z by an operator$`, "m");
  expect(text).toContain("tally: 1 ended dialog's end note to be said at the bot's next start\n");
  expect(text).toMatch(row);
  const status = await up.running.daemon.status();
  expect(status.bots[0]!.dialogs.notes).toEqual([noteOf(up, id)]);
  expect(formatStatus(status)).toContain(
    "tally: 1 ended dialog's end note to be said at the bot's next start\n",
  );
  expect(formatStatus(status)).toMatch(row);
  expect(renderStatusPage(status)).toContain("<dt>end notes</dt><dd>1 not said yet (bothost dialogs)</dd>");
  // Said at its next start: listed no more.
  await bot.start();
  await expect
    .poll(() => botSaid(up!), { timeout: 10_000 })
    .toContain("An operator ended this conversation.");
  await expect
    .poll(() => dialogDesk(up!.running.daemon.bots).dialogs())
    .toEqual([{ bot: "tally", dialogs: [] }]);
});

it("lists a running bot's end note while its send is under way, and once its send failed, until said", {
  timeout: 30_000,
}, async () => {
  up = await startTally();
  const { control } = up.sandbox;
  const bot = up.running.daemon.bots[0]!;
  up.dm("tally");
  await expect
    .poll(() => bot.dialogs().map((d) => d.deadline !== undefined), { timeout: 15_000 })
    .toEqual([true]);
  const id = bot.dialogs()[0]!.id;
  const desk = dialogDesk(up.running.daemon.bots);
  // The note's send held by the server: being said now.
  control.delay(60_000, { paths: ["/messages"], methods: ["POST"] });
  await desk.endDialog("tally", id);
  await expect.poll(() => control.delayed()).toBe(1);
  expect(await desk.dialogs()).toEqual([
    { bot: "tally", dialogs: [], notes: [{ ...noteOf(up, id), sending: true, saying: true }] },
  ]);
  expect(formatStatus(await up.running.daemon.status())).toContain(
    "by an operator (being said now: a send that fails leaves it to the bot's next start)",
  );
  // The send fails (a 500: it may have reached the server): the note waits for the bot's next
  // start, which looks for it before saying it.
  control.failNext(1, { status: 500, methods: ["POST"], paths: ["/messages"] });
  control.delay(0);
  await expect.poll(() => up!.running.logged("could not tell the person their dialog ended")).toHaveLength(1);
  const { json, text } = await cliDialogs(up);
  const failed = { ...noteOf(up, id), sending: true };
  expect(json).toEqual([{ bot: "tally", dialogs: [], notes: [failed] }]);
  expect(text).toContain("tally: 1 ended dialog's end note to be said at the bot's next start\n");
  expect(text).toContain("by an operator (its send was under way: looked for before it is said)");
  expect((await up.running.daemon.status()).bots[0]!.dialogs.notes).toEqual([failed]);
});
