/**
 * `bothost run` killed (kill -9, at a crash point) right after the server answered a change of a
 * saved snippet, or a report, and before the run recorded it: at the next start the message is
 * caught up, its handler runs again, finds what the first run made, and makes nothing twice; what
 * the handler does after (its reply) is done once. On the file store, and on Redis when one answers.
 */
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { crashBackends } from "../support/crash-backends.ts";
import { BOT, botSaid, selfKillingBot, useSelfKillingBots } from "../support/self-killing-bot.ts";

const MEMBER = "member@sandbox.example";

useSelfKillingBots();

/** Each direct message says what to do: `ensure <title> <content>`, `create …`, or `report <id>`. */
const moduleText = () => `export default { setup(bot) {
  bot.on("message", async (ctx) => {
    const [verb, title, ...rest] = ctx.text.split(" ");
    if (verb === "ensure") {
      const r = await ctx.snippets.ensure(title, rest.join(" "));
      await ctx.reply(r.action + " #" + r.snippet.id);
    } else if (verb === "create") {
      const s = await ctx.snippets.create(title, rest.join(" "));
      await ctx.reply("created #" + s.id);
    } else if (verb === "report") {
      const r = await ctx.report(Number(title), "spam", "asked to");
      await ctx.reply(JSON.stringify(r));
    }
  });
} };
`;

const reportsPosted = (s: Sandbox) =>
  s.control.messages().filter((m) => String(m.content).includes("reported a message sent by"));

const backends = await crashBackends("snippet-report-crash");

const cases = [
  { point: "snippet-saved", say: "ensure Welcome Hi, and welcome!", said: "created #1", snippets: 1 },
  { point: "snippet-saved", say: "create FAQ Ask away.", said: "created #1", snippets: 1 },
  // Its answer not recorded: made, for all the bot can tell, and unconfirmed.
  {
    point: "report-made",
    say: "report",
    said: '{"reported":true,"earlier":true,"unconfirmed":true}',
    snippets: 0,
  },
];

describe.each(backends)("on the %s", (_name, backendFor) => {
  it.each(cases)(
    "killed at $point after $say: made once, the reply said once",
    { timeout: 60_000 },
    async (c) => {
      const { sandbox, start } = await selfKillingBot({
        moduleText,
        stateYaml: (dir) => backendFor(dir).yaml,
      });
      const first = await start({ BOTHOST_FAILPOINTS: `${c.point}@1` });
      const spam = sandbox.control.sendAs(MEMBER, {
        type: "stream",
        to: "general",
        topic: "t",
        content: "buy",
      }).id;
      const say = c.say === "report" ? `report ${spam}` : c.say;
      sandbox.control.sendAs(MEMBER, { type: "direct", to: [BOT], content: say });
      expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
      expect(botSaid(sandbox)).toEqual([]);

      const again = await start();
      await sandbox.control.waitFor(() => botSaid(sandbox).length > 0, { timeoutMs: 20_000 });
      expect(botSaid(sandbox)).toEqual([c.said]);
      const bot = createClient({ url: sandbox.url, email: BOT, apiKey: sandbox.control.apiKeyOf(BOT) });
      expect((await bot.savedSnippets.list()).saved_snippets).toHaveLength(c.snippets);
      expect(reportsPosted(sandbox)).toHaveLength(c.point === "report-made" ? 1 : 0);
      again.kill("SIGTERM");
      expect(await again.exited).toEqual({ code: 0, signal: null });
    },
  );
});
