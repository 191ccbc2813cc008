/**
 * A group name the server does not have, in a prompt's `from: { group }` or a command's
 * `allow: { groups }` (a typo, a group renamed), in a bot that tracks groups: nobody can answer
 * or run it, and the bot's log says so once, naming the group, instead of staying silent. It
 * imports "bothost", which resolves to dist/: run `npm run build` first (`npm test` does).
 */
import { defineBot } from "bothost";
import { createBotTest, expect } from "bothost/testing/vitest";
import { BOT, RELEASE_ORG, REQ, RITA } from "../../support/release-org.ts";

const test = createBotTest({ org: RELEASE_ORG });
const say = (content: string) => ({ type: "stream" as const, to: "ops", topic: "deploys", content });
const unknownGroup = (msg: unknown) => /"release-managrs".*no such group/.test(String(msg));

test("a question for a group the server does not have: the first answer checked names the group", async ({
  runBot,
}) => {
  const typo = defineBot({
    setup(b) {
      b.track("groups");
      b.command("ok", async (ctx) => {
        const answer = await ctx.prompt("OK?", { from: { group: "release-managrs" } });
        await ctx.reply(`by ${answer.by.name}`);
      });
    },
  });
  const bot = await runBot({ bot: typo, name: "typo", email: BOT });
  expect((await bot.ask(REQ, say("@**Approvals** ok"))).content).toBe("OK?");
  bot.post(RITA, say("yes"));
  await expect.poll(() => bot.logs().find((l) => unknownGroup(l.msg))).toMatchObject({ level: 40 });
  bot.post(RITA, say("yes again"));
  await bot.handled(bot.post(RITA, say("still yes")));
  expect(bot.logs().filter((l) => unknownGroup(l.msg))).toHaveLength(1);
  expect(bot.dialogs()).toHaveLength(1);
});

test("a command allowed to a group the server does not have: the first refusal names the group", async ({
  runBot,
}) => {
  const typo = defineBot({
    setup(b) {
      b.command("ship", { allow: { groups: ["release-managrs"] } }, (ctx) => ctx.reply("shipped"));
    },
  });
  const bot = await runBot({ bot: typo, name: "typo", email: BOT });
  expect((await bot.ask(RITA, say("@**Approvals** ship"))).content).toBe(
    'Sorry, only members of "release-managrs" may run `ship`.',
  );
  await bot.ask(RITA, say("@**Approvals** ship"));
  expect(bot.logs().filter((l) => unknownGroup(l.msg))).toMatchObject([{ level: 40 }]);
});
