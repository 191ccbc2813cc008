/**
 * Subcommands (`bot.command("standup skip", …)`) against the sandbox over HTTP: each with its own
 * arguments, permission and usage, in the generated help and in `bothost commands --json`.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { BotApi } from "../../../src/bot/bot-api.ts";
import { defineBot } from "../../../src/bot/define-bot.ts";
import type { BotCommands } from "../../../src/cli/commands.ts";
import { startSandbox } from "../../../src/sandbox/start-sandbox.ts";
import type { OrgInput, Sandbox } from "../../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../../src/testing/run-bot.ts";
import standup from "../../fixtures/bots/standup-commands.ts";
import { assertBuilt, runCli } from "../../support/cli.ts";

const OWNER = "owner@sandbox.example";
const MOD = "mod@sandbox.example";
const MEMBER = "member@sandbox.example";
const BOT = "standup-bot@sandbox.example";
const ORG: OrgInput = {
  realm: { name: "Sandbox", host: "sandbox.example" },
  users: [
    { email: OWNER, full_name: "Olive Owner", role: "owner" },
    { email: MOD, full_name: "Moe Moderator", role: "moderator" },
    { email: MEMBER, full_name: "Mel Member", role: "member" },
  ],
  bots: [{ email: BOT, full_name: "Standup", type: "generic", owner: OWNER }],
  channels: [{ name: "general", subscribers: [OWNER, MOD, MEMBER, BOT], is_default: true }],
};

let sandbox: Sandbox;
let bot: TestBot;
beforeEach(async () => {
  sandbox = await startSandbox({ org: ORG });
  bot = await runBot(sandbox, { bot: standup, name: "standup", email: BOT });
});
afterEach(async () => {
  await bot.stop();
  await sandbox.stop();
});

const dm = async (from: string, content: string) =>
  (await bot.ask(from, { type: "direct", to: [BOT], content })).content;

describe("a subcommand", () => {
  it("runs by its name after the command's, with its own arguments; a bare command runs the parent", async () => {
    expect(await dm(MEMBER, "standup")).toBe("standup for Mel Member");
    expect(await dm(MEMBER, "standup skip at the dentist")).toBe(
      "standup skip (as standup skip): at the dentist",
    );
    expect(await dm(MEMBER, "Standup PASS")).toBe("standup skip (as Standup PASS): no reason");
    const mention = await bot.ask(MEMBER, {
      type: "stream",
      to: "general",
      topic: "daily",
      content: "@**Standup** standup skip ill",
    });
    expect(mention.content).toBe("standup skip (as standup skip): ill");
  });

  it("is refused by its own permission, which the parent does not have", async () => {
    expect(await dm(MEMBER, "standup report")).toBe(
      "Sorry, only moderators, administrators and owners may run `standup report`.",
    );
    expect(await dm(MOD, "standup report 3 --full")).toBe("report of 3 day(s), in full");
    expect(await dm(MOD, "standup report")).toBe("report of 1 day(s)");
  });

  it("answers its own usage errors, and an unknown subcommand with the closest", async () => {
    expect(await dm(MOD, "standup report nine")).toBe(
      '`standup report`: <days>: expected a number, got "nine".\nUsage: `standup report [days] [--full]` (`help standup report` for more)',
    );
    expect(await dm(MEMBER, "standup skp")).toBe(
      '`standup`: "standup" has no subcommand "skp" (did you mean "standup skip"?).\nUsage: `standup` (`help standup` for more)',
    );
    expect(await dm(MEMBER, "standup dance")).toMatch(
      /no subcommand "dance"; its subcommands: skip, report\./,
    );
  });

  it("shows in the generated help: the list, the command's and its own", async () => {
    const list = await dm(MEMBER, "help");
    expect(list).toContain(
      [
        "* `standup`: answer today's standup questions",
        "* `standup skip [reason...]`: skip today's standup",
        "* `standup report [days] [--full]`: today's answers so far (moderators, administrators and owners)",
      ].join("\n"),
    );
    expect(await dm(MEMBER, "help standup")).toContain(
      "Subcommands:\n* `standup skip [reason...]`: skip today's standup\n* `standup report",
    );
    const one = await dm(MEMBER, "help standup report");
    expect(one).toContain(
      "**standup report**: today's answers so far\nUsage: `standup report [days] [--full]`",
    );
    expect(one).toContain("* `<days>` (number, optional): how many days back");
    expect(one).toContain("Who may run it: moderators, administrators and owners.");
    expect(await dm(MEMBER, "help standup reprot")).toMatch(
      /^`standup` has no subcommand `reprot`\. Did you mean `standup report`\?/,
    );
  });
});

describe("declaring subcommands", () => {
  const fails = async (setup: (bot: BotApi<undefined>) => void) => {
    await bot.stop();
    const run = runBot(sandbox, { bot: defineBot({ setup }), name: "broken", email: BOT });
    await expect(run).rejects.toThrow();
    return run.catch((err: Error) => err.message);
  };

  it("fails the setup with a message naming the mistake", async () => {
    expect(await fails((b) => b.command("standup skip", (ctx) => ctx.reply("")))).toContain(
      'bot.command("standup skip"): declare the command "standup" (its handler runs for a bare "standup") before its subcommands.',
    );
    expect(
      await fails((b) => {
        b.command("standup", (ctx) => ctx.reply(""));
        b.command("standup report weekly", (ctx) => ctx.reply(""));
      }),
    ).toContain('bot.command("standup report weekly"): subcommands go one level deep');
    expect(
      await fails((b) => {
        b.command("standup", (ctx) => ctx.reply(""));
        b.command("standup skip", { aliases: ["pass"] }, (ctx) => ctx.reply(""));
        b.command("standup pass", (ctx) => ctx.reply(""));
      }),
    ).toContain('bot.command("standup pass"): the name "pass" is already a command or an alias.');
    // A name that is no command name, said as such (not "declare the command first").
    expect(await fails((b) => b.command("bad name!", (ctx) => ctx.reply("")))).toContain(
      'bot.command("bad name!"): each word must be 1-32 letters, digits, "_" or "-", starting with a letter; got "name!".',
    );
    bot = await runBot(sandbox, { bot: standup, name: "standup", email: BOT });
  });
});

describe("bothost commands --json", () => {
  it("lists the subcommands of a command with their arguments and permission", async () => {
    assertBuilt();
    const { code, stdout } = await runCli([
      "commands",
      "--json",
      "--config",
      "test/fixtures/bots/standup.yaml",
    ]);
    expect(code).toBe(0);
    const [{ commands }] = (JSON.parse(stdout) as { bots: BotCommands[] }).bots as [BotCommands];
    const parent = commands.find((c) => c.name === "standup")!;
    expect(parent.subcommands.map((s) => [s.name, s.usage, s.permission])).toEqual([
      ["skip", "standup skip [reason...]", null],
      ["report", "standup report [days] [--full]", { roles: ["owner", "admin", "moderator"] }],
    ]);
    expect(parent.subcommands[1]!.arguments).toEqual([
      { name: "days", type: "number", required: false, description: "how many days back" },
    ]);
    expect(parent.subcommands[0]!.subcommands).toEqual([]);
  });

  it("prints the subcommands after their command in the text listing", async () => {
    const { code, stdout } = await runCli(["commands", "--config", "test/fixtures/bots/standup.yaml"]);
    expect(code).toBe(0);
    expect(stdout).toContain(
      [
        "  standup  —  answer today's standup questions",
        "  standup skip [reason...]  —  skip today's standup",
        "      <reason> (string, optional): why, for the summary",
        "      also: pass",
        "  standup report [days] [--full]  —  today's answers so far",
      ].join("\n"),
    );
  });
});
