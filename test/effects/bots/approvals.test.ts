/**
 * The approvals bot (bots/approvals.ts) against the sandbox over HTTP: a deploy request in a
 * channel topic waits for a member of the group other than the requester, who approves or
 * rejects by word or number; others' messages there, and approvers' talk that is no choice, are
 * ordinary; nobody within the deadline and it expires; the requester withdraws it; an approval
 * calls the webhook once, signed, through a crash; operators see who is awaited; a requester with
 * 20 requests waiting is told a 21st is not asked (before, the bot said nothing). It imports
 * "bothost", which resolves to dist/: run `npm run build` first (`npm test` does).
 */
import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import { defineBot } from "bothost";
import { createBotTest, expect } from "bothost/testing/vitest";
import { afterEach } from "vitest";
import approvals from "../../../bots/approvals.ts";
import { deleteMessageAs } from "../../support/delete-message.ts";
import { addToGroup } from "../../support/group-members.ts";
import { BOT, OWNER, RELEASE_ORG, REQ, RITA, RON } from "../../support/release-org.ts";
import { renewed } from "../../support/two-questions.ts";

const SECRET = "a-deploy-hook-secret-of-some-length";

// The requester is a release manager too: the request is still not theirs to approve.
const test = createBotTest({ org: RELEASE_ORG });

const topic = { type: "stream" as const, to: "ops", topic: "deploys" };
const GROUP = { group: "release-managers" };
const say = (content: string) => ({ ...topic, content });
const QUESTION =
  "**Rae Requester** asks to deploy **api 1.4.2**. A member of release-managers decides:\n1. :check: approve\n2. :cross_mark: reject";

/** A webhook receiver on localhost: each call's body and whether its signature checks. */
let hook: Server | undefined;
const calls: { body: string; signed: boolean }[] = [];
async function startHook(status = 204): Promise<string> {
  hook = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const [t, v1] = String(req.headers["x-signature"])
        .split(",")
        .map((p) => p.split("=")[1]);
      const expected = createHmac("sha256", SECRET).update(`${t}.${body}`).digest("hex");
      calls.push({ body, signed: v1 === expected });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => hook!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(hook.address() as { port: number }).port}/deploy`;
}
afterEach(async () => {
  calls.length = 0;
  await new Promise((resolve) => (hook ? hook.close(resolve) : resolve(undefined)));
  hook = undefined;
});

test("a member other than the requester approves by number; the webhook is called once, signed, through a crash", async ({
  runBot,
}) => {
  const webhook_url = await startHook();
  const settings = { group: "release-managers", webhook_url, webhook_secret: SECRET };
  const bot = await runBot({ bot: approvals, name: "approvals", email: BOT, settings });
  const request = bot.post(REQ, say("@**Approvals** deploy api 1.4.2"));
  expect((await bot.nextReply({ after: request })).content).toBe(QUESTION);
  await expect
    .poll(() => bot.dialogs())
    .toMatchObject([
      {
        userName: "Rae Requester",
        where: "#ops > deploys",
        awaiting: "a member of release-managers (not Rae Requester)",
      },
    ]);
  // The requester cannot approve their own deploy: an ordinary message, the question still waits.
  await bot.post(REQ, say("approve"));
  await bot.restart({ crash: true });
  // The topic shows the webhook being called, then the approval.
  const shown = await bot.progress(bot.post(RITA, say("1")));
  expect(shown).toMatchObject({ text: "Deploy of api 1.4.2 approved by Rita Release.", edits: 1 });
  expect(shown.failed).toBeUndefined();
  expect(calls).toEqual([{ body: expect.stringContaining('"by":"Rita Release"'), signed: true }]);
  expect(JSON.parse(calls[0]!.body)).toEqual({
    event: "deploy.approved",
    // The asking message's id: a receiver acts once per request, should a crash repeat the call.
    request,
    service: "api",
    version: "1.4.2",
    by: "Rita Release",
  });
  // Ron's later "reject" is an ordinary message: the decision was made.
  await bot.post(RON, say("reject"));
  await bot.restart();
  expect(bot.replies().map((m) => m.content)).toEqual([
    QUESTION,
    "Deploy of api 1.4.2 approved by Rita Release.",
  ]);
  expect(bot.dialogs()).toEqual([]);
});

test("a webhook that fails on every attempt: the topic is told the webhook did not succeed and that an operator can retry", async ({
  runBot,
}) => {
  const webhook_url = await startHook(500);
  const settings = { group: "release-managers", webhook_url, webhook_secret: SECRET };
  const config = "retries: { attempts: 2, backoff: 50ms }";
  const bot = await runBot({ bot: approvals, name: "approvals", email: BOT, settings, config });
  await bot.ask(REQ, say("@**Approvals** deploy api 1.4.2"));
  const shown = await bot.progress(bot.post(RITA, say("approve")));
  expect(calls).toHaveLength(2);
  expect(shown.text).toBe(
    "Deploy of api 1.4.2 approved by Rita Release. The deploy webhook did not answer with success: ask an operator to retry it (`bothost failed retry`).",
  );
  expect(shown.failed).toMatch(/kept as dead letter approvals\/\d+\): the deploy webhook answered 500/);
});

test("a reaction on the question decides: the requester's and a removed one do not, the first allowed one does", async ({
  runBot,
  sandbox,
}) => {
  const bot = await runBot({ bot: approvals, name: "approvals", email: BOT, settings: GROUP });
  const question = await bot.ask(REQ, say("@**Approvals** deploy api 1.4.2"));
  expect(question.content).toBe(QUESTION);
  // The bot's own reactions are the buttons.
  await expect
    .poll(() =>
      (sandbox.control.messageView(question.id)!.reactions as { emoji_name: string }[]).map(
        (r) => r.emoji_name,
      ),
    )
    .toEqual(["check", "cross_mark"]);
  await bot.react(question, "check", { as: REQ });
  await bot.react(question, "cross_mark", { as: RON });
  await bot.react(question, "cross_mark", { as: RON, remove: true });
  expect((await bot.nextReply({ after: question.id })).content).toBe(
    "Deploy of api 1.4.2 rejected by Ron Release.",
  );
  // Rita's later reaction is an ordinary event: the decision was made.
  await bot.react(question, "check", { as: RITA });
  await bot.restart();
  expect(bot.replies().map((m) => m.content)).toEqual([
    QUESTION,
    "Deploy of api 1.4.2 rejected by Ron Release.",
  ]);
});

test("rejected by word, without case; expired when nobody decides within the timeout", async ({
  runBot,
  clock,
}) => {
  const bot = await runBot({
    bot: approvals,
    name: "approvals",
    email: BOT,
    settings: { group: "release-managers", timeout: "2h" },
  });
  expect((await bot.ask(REQ, say("@**Approvals** deploy api 1.4.2"))).content).toBe(QUESTION);
  expect((await bot.ask(RON, say("Reject"))).content).toBe("Deploy of api 1.4.2 rejected by Ron Release.");
  const second = say("@**Approvals** deploy web 2.0.0");
  expect((await bot.ask(REQ, second)).content).toMatch(
    /^\*\*Rae Requester\*\* asks to deploy \*\*web 2\.0\.0\*\*/,
  );
  // Talk in the topic that is no choice decides nothing, and the bot says nothing to it.
  await bot.handled(bot.post(RITA, say("maybe")));
  expect(bot.replies()).toHaveLength(3);
  await clock.advance(2 * 3_600_000 + 1_000);
  await expect
    .poll(() => bot.replies().at(-1)?.content)
    .toBe("Deploy of web 2.0.0 expired: nobody decided in 2h.");
});

test("the requester withdraws the request, also while the bot is down: said once, the topic free; an approver's withdraw decides nothing", async ({
  runBot,
}) => {
  const bot = await runBot({ bot: approvals, name: "approvals", email: BOT, settings: GROUP });
  expect((await bot.ask(REQ, say("@**Approvals** deploy api 1.4.2"))).content).toBe(QUESTION);
  // An approver's withdraw is talk in the topic: the request waits on.
  await bot.handled(bot.post(RITA, say("withdraw")));
  expect(bot.dialogs()).toHaveLength(1);
  await bot.stop();
  const withdraw = bot.post(REQ, say("withdraw"));
  await bot.start();
  expect((await bot.nextReply({ after: withdraw })).content).toBe(
    "Deploy of api 1.4.2 withdrawn by its requester.",
  );
  await expect.poll(() => bot.dialogs()).toEqual([]);
  // The topic takes a new request.
  const next = await bot.ask(REQ, say("@**Approvals** deploy web 2.0.0"));
  expect(next.content).toMatch(/^\*\*Rae Requester\*\* asks to deploy \*\*web 2\.0\.0\*\*/);
  await bot.restart({ crash: true });
  expect(bot.replies().map((m) => m.content)).toEqual([
    QUESTION,
    "Deploy of api 1.4.2 withdrawn by its requester.",
    next.content,
  ]);
});

test("the requester withdraws by naming the bot too; named to the bot with no request waiting, withdraw says so", async ({
  runBot,
}) => {
  const bot = await runBot({ bot: approvals, name: "approvals", email: BOT, settings: GROUP });
  expect((await bot.ask(REQ, say("@**Approvals** deploy api 1.4.2"))).content).toBe(QUESTION);
  expect((await bot.ask(REQ, say("@**Approvals** withdraw"))).content).toBe(
    "Deploy of api 1.4.2 withdrawn by its requester.",
  );
  // Decided, then withdrawn too late: the requester is told nothing waits.
  await bot.ask(REQ, say("@**Approvals** deploy api 1.4.3"));
  expect((await bot.ask(RITA, say("approve"))).content).toBe("Deploy of api 1.4.3 approved by Rita Release.");
  expect((await bot.ask(REQ, say("@**Approvals** withdraw"))).content).toBe(
    "No deploy request of yours waits for a decision in this topic.",
  );
});

test("the requester is told when another request waits there; approvers talking in the topic decide nothing", async ({
  runBot,
}) => {
  const bot = await runBot({ bot: approvals, name: "approvals", email: BOT, settings: GROUP });
  expect((await bot.ask(REQ, say("@**Approvals** deploy api 1.4.2"))).content).toBe(QUESTION);
  expect((await bot.ask(OWNER, say("@**Approvals** deploy web 2.0.0"))).content).toBe(
    "Another request waits for a decision in this topic: ask for web 2.0.0 again once it is decided.",
  );
  // Approvers chatting in the topic: ordinary messages, the request still waits.
  for (const [who, chat] of [
    [RITA, "let me check the changelog"],
    [RON, "looks fine to me"],
    [RITA, "one moment"],
    [RON, "approved?"],
  ] as const)
    await bot.handled(bot.post(who, say(chat)));
  expect(bot.replies()).toHaveLength(2);
  expect(bot.dialogs()).toHaveLength(1);
  expect((await bot.ask(RITA, say("approve"))).content).toBe("Deploy of api 1.4.2 approved by Rita Release.");
});

test("a requester with 20 requests waiting is told that a 21st is not asked; it is, once one is decided", async ({
  runBot,
}) => {
  const bot = await runBot({ bot: approvals, name: "approvals", email: BOT, settings: GROUP });
  const inTopic = (name: string, content: string) => ({ ...topic, topic: name, content });
  const request = (i: number) => inTopic(`deploys ${i}`, `@**Approvals** deploy api 1.4.${i}`);
  for (let i = 0; i < 20; i++) await bot.ask(REQ, request(i));
  expect((await bot.ask(REQ, request(20))).content).toBe(
    "Too many of your deploy requests wait for a decision: ask for api 1.4.20 again once one of them is decided or withdrawn.",
  );
  expect(bot.dialogs()).toHaveLength(20);
  await bot.ask(RITA, inTopic("deploys 0", "approve"));
  await expect.poll(() => bot.dialogs()).toHaveLength(19);
  expect((await bot.ask(REQ, request(20))).content).toBe(
    "**Rae Requester** asks to deploy **api 1.4.20**. A member of release-managers decides:\n1. :check: approve\n2. :cross_mark: reject",
  );
});

test("a request whose question someone deletes ends undecided, the requester told; the topic is free again", async ({
  runBot,
  sandbox,
}) => {
  const bot = await runBot({ bot: approvals, name: "approvals", email: BOT, settings: GROUP });
  const question = await bot.ask(REQ, say("@**Approvals** deploy api 1.4.2"));
  expect(question.content).toBe(QUESTION);
  // Its first question renewed the bot's queue with message deletions.
  await renewed(bot);
  // The owner deletes the bot's question, through the server's own route.
  await deleteMessageAs(sandbox, OWNER, question.id);
  // The deletion's event, then the dialog's end and its reply: more than the poll's default
  // second on a loaded machine.
  await expect
    .poll(() => bot.replies().at(-1)?.content, { timeout: 10_000 })
    .toBe("Deploy of api 1.4.2 not decided: its question was deleted.");
  await expect.poll(() => bot.dialogs()).toEqual([]); // ended once the run that said so returns
  // An approver's word now decides nothing, and a new request there is asked.
  await bot.handled(bot.post(RITA, say("approve")));
  expect(bot.replies().filter((m) => /approved/.test(m.content))).toEqual([]);
  expect((await bot.ask(REQ, say("@**Approvals** deploy api 1.4.3"))).content).toMatch(
    /asks to deploy \*\*api 1\.4\.3/,
  );
});

test("a question for a group in a bot that does not track groups: the first answer checked says how to fix it", async ({
  runBot,
}) => {
  const untracked = defineBot({
    setup(b) {
      b.command("ok", async (ctx) => {
        const answer = await ctx.prompt("OK?", { from: { group: "release-managers" } });
        await ctx.reply(`by ${answer.by.name}`);
      });
    },
  });
  const bot = await runBot({ bot: untracked, name: "untracked", email: BOT });
  await bot.ask(REQ, say("@**Approvals** ok"));
  bot.post(RITA, say("yes"));
  await expect
    .poll(() => bot.logs().find((l) => String(l.msg).includes('call bot.track("groups") in setup')))
    .toMatchObject({ level: 40 });
  expect(bot.dialogs()).toHaveLength(1);
});

// Settings a request could only fail on (every attempt, in silence: a dead letter) are refused at
// start, as `bothost check` and `run` check them; the URL's password is in no message.
test("a timeout that is no duration, and a webhook URL with a password, are settings problems", async ({
  runBot,
}) => {
  const run = (settings: object) =>
    runBot({ bot: approvals, name: "approvals", email: BOT, settings: { ...GROUP, ...settings } });
  await expect(run({ timeout: "2 days" })).rejects.toThrow(
    'bots.approvals.settings.timeout: must be a duration such as "4h", "1d" or "1d12h"',
  );
  await expect(run({ timeout: "31d" })).rejects.toThrow(
    "bots.approvals.settings.timeout: must be from 1s to 30d",
  );
  const refused = run({ webhook_url: "https://ci:hunter2-hook@ci.example.org/deploy" });
  await expect(refused).rejects.toThrow(
    "bots.approvals.settings.webhook_url: must not hold a user or password (fetch refuses such a URL): authenticate with webhook_secret",
  );
  await expect(refused).rejects.not.toThrow(/hunter2/);
});

// Asked in a direct message, the question would wait there, where no approver sees it, until it
// expired: the request is refused at once, saying where to ask.
test("a request in a direct message is refused, saying where to ask", async ({ runBot }) => {
  const bot = await runBot({ bot: approvals, name: "approvals", email: BOT, settings: GROUP });
  const told = await bot.ask(REQ, { type: "direct", to: [bot.email], content: "deploy api 1.4.2" });
  expect(told.content).toBe(
    "Ask in a channel topic the members of release-managers read: they cannot see our direct messages.",
  );
  expect(bot.dialogs()).toEqual([]);
});

// An outgoing-webhook bot keeps no queue, so no user_group events keep its groups current: they
// are read at its start and again before a message once a minute old (cache-snapshot.ts).
test("as an outgoing-webhook bot: a member's approval is taken, and a member added later decides", async ({
  runBot,
  sandbox,
  clock,
}) => {
  const bot = await runBot({
    bot: approvals,
    name: "approvals",
    email: "hook-approvals@sandbox.example",
    channels: ["ops"],
    settings: GROUP,
    outgoingWebhook: true,
  });
  const say = (content: string) => ({ ...topic, content: `@**approvals** ${content}` });
  const first = bot.post(REQ, say("deploy api 1.4.2"));
  expect((await bot.nextReply({ after: first })).content).toContain("asks to deploy **api 1.4.2**");
  const approved = bot.post(RITA, say("approve"));
  expect((await bot.nextReply({ after: approved })).content).toBe(
    "Deploy of api 1.4.2 approved by Rita Release.",
  );

  // The owner joins the group; a minute later the bot reads the groups again before a message.
  const second = bot.post(REQ, say("deploy web 2.0"));
  expect((await bot.nextReply({ after: second })).content).toContain("asks to deploy **web 2.0**");
  await addToGroup(sandbox, "release-managers", OWNER, OWNER);
  await clock.advance(61_000);
  const decided = bot.post(OWNER, say("reject"));
  expect((await bot.nextReply({ after: decided })).content).toBe(
    "Deploy of web 2.0 rejected by Olive Owner.",
  );

  // The requester withdraws by mentioning the bot too: only mentions reach it.
  const third = bot.post(REQ, say("deploy api 1.4.3"));
  expect((await bot.nextReply({ after: third })).content).toContain("asks to deploy **api 1.4.3**");
  const withdrawn = bot.post(REQ, say("withdraw"));
  expect((await bot.nextReply({ after: withdrawn })).content).toBe(
    "Deploy of api 1.4.3 withdrawn by its requester.",
  );
  await expect.poll(() => bot.dialogs()).toEqual([]);
});
