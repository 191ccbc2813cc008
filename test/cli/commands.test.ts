/** `bothost commands`: the shipped bots' commands as text and as JSON, read offline from their setup. */
import { beforeAll, describe, expect, it } from "vitest";
import type { BotCommands } from "../../src/cli/commands.ts";
import { assertBuilt, hasStackTrace, runCli } from "../support/cli.ts";

beforeAll(assertBuilt);

const DEMO = "bots/demo/bothost.yaml";

describe("bothost commands", () => {
  it("--json prints every shipped bot's commands: name, description, arguments, permission", async () => {
    const { code, stdout, stderr } = await runCli(["commands", "--json", "--config", DEMO]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const { bots } = JSON.parse(stdout) as { bots: BotCommands[] };
    const byBot = Object.fromEntries(bots.map((b) => [b.bot, b]));
    expect(Object.keys(byBot).sort()).toEqual(["announcements", "echo", "moderation", "welcome"]);
    const moderation = byBot.moderation!.commands;
    expect(moderation.map((c) => c.name)).toEqual(["help", "rules", "stats"]);
    expect(moderation.find((c) => c.name === "stats")).toEqual({
      name: "stats",
      description: "messages flagged per rule in the last 24 hours",
      aliases: [],
      usage: "stats",
      arguments: [],
      options: [],
      examples: [],
      permission: { roles: ["owner", "admin", "moderator"] },
      subcommands: [],
    });
    expect(moderation.find((c) => c.name === "help")!.arguments).toEqual([
      { name: "command", type: "string", required: false, description: "a command's name" },
    ]);
    expect(byBot.announcements!.commands.map((c) => c.name)).toContain("next");
    for (const bot of bots) expect(bot.commands.length, bot.bot).toBeGreaterThan(0);
  });

  it("prints one bot's commands as text", async () => {
    const { code, stdout } = await runCli(["commands", "moderation", "--config", DEMO]);
    expect(code).toBe(0);
    expect(stdout).toContain("moderation: in direct messages, when mentioned\n");
    expect(stdout).toContain("  stats  —  messages flagged per rule in the last 24 hours\n      who: roles owner, admin, moderator\n");
    expect(stdout).not.toContain("announcements");
  });

  it("names an unknown bot with a did-you-mean (exit 2, no stack trace)", async () => {
    const { code, stderr } = await runCli(["commands", "moderaton", "--config", DEMO]);
    expect(code).toBe(2);
    expect(stderr).toBe(
      'bothost commands: no bot "moderaton" in the config (did you mean "moderation"?). Run "bothost commands --help" for the options.\n',
    );
    expect(hasStackTrace(stderr)).toBe(false);
  });
});
