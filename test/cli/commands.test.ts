/** `bothost commands`: the shipped bots' commands as text and as JSON, read offline from their setup. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
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
      { name: "subcommand", type: "string", required: false, description: "one of its subcommands" },
    ]);
    expect(byBot.announcements!.commands.map((c) => c.name)).toContain("next");
    for (const bot of bots) expect(bot.commands.length, bot.bot).toBeGreaterThan(0);
  });

  it("prints one bot's commands as text", async () => {
    const { code, stdout } = await runCli(["commands", "moderation", "--config", DEMO]);
    expect(code).toBe(0);
    expect(stdout).toContain("moderation: in direct messages, when mentioned\n");
    expect(stdout).toContain(
      "  stats  —  messages flagged per rule in the last 24 hours\n      who: roles owner, admin, moderator\n",
    );
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

  it("lists the commands of a config whose API key variables are not set here, saying so", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "bothost-commands-"));
    try {
      const config = path.join(dir, "bothost.yaml");
      const unsetKey = ["$", "{BOTHOST_TEST_UNSET_KEY}"].join("");
      const text = [
        "server:",
        "  url: https://chat.example.org",
        "bots:",
        "  echo:",
        `    module: ${path.resolve("bots/echo.ts")}`,
        "    email: echo-bot@chat.example.org",
        `    api_key: ${unsetKey}`,
        "",
      ].join("\n");
      await writeFile(config, text);
      const { code, stdout, stderr } = await runCli(["commands", "--config", config]);
      expect(code).toBe(0);
      expect(stdout).toContain("echo: in direct messages, when mentioned\n");
      expect(stdout).toContain("shout");
      expect(stderr).toBe(
        "bothost commands: BOTHOST_TEST_UNSET_KEY is not set here; read as a placeholder (nothing is sent).\n",
      );
      // The per-instance listen address of docs/operations/instances.md, its port unset here too.
      const unsetPort = ["$", "{BOTHOST_TEST_UNSET_PORT}"].join("");
      await writeFile(config, `${text}http:\n  listen: 127.0.0.1:${unsetPort}\n`);
      const instance = await runCli(["commands", "--config", config]);
      expect(instance).toMatchObject({ code: 0, stdout: expect.stringContaining("shout") });
      expect(instance.stderr).toBe(
        "bothost commands: BOTHOST_TEST_UNSET_KEY, BOTHOST_TEST_UNSET_PORT are not set here; read as placeholders (nothing is sent).\n",
      );
      // Another problem besides the unset variable: the load's own error, as `run` reports it.
      await writeFile(config, `${text}    concurrency: many\n`);
      const broken = await runCli(["commands", "--config", config]);
      expect(broken.code).not.toBe(0);
      expect(broken.stderr).toContain("environment variable BOTHOST_TEST_UNSET_KEY is not set");
      expect(broken.stderr).toContain("bots.echo.concurrency");
      expect(hasStackTrace(broken.stderr)).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
