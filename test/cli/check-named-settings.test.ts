/**
 * A bot's settings that name channels (`channelSetting()`), user groups (`groupSetting()`) and
 * users (`userSetting()`, the welcome bot's `notify`) and the bot's saved snippets
 * (`snippetSetting()`, the announcements bot's `snippet`):
 * `bothost check` looks each up on the server and says, located in the config, each one the bot
 * cannot see (with the name likely meant), exit 1; `bothost run` warns of them as the bot starts,
 * and runs it all the same; `bothost reload` prints them for the bots it started. Before, a misspelt channel or group passed `check`, and only the
 * moderation bot looked its own channels up, at run. A project made by `bothost init`, on its
 * embedded sandbox.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type BotCheck, formatChecks } from "../../src/cli/check.ts";
import { hasStackTrace, killAll, runCli, spawnCli } from "../support/cli.ts";
import { initProject } from "../support/init-project.ts";

let dir: string;
let project: string;
let config: string;

beforeAll(async () => {
  ({ dir, project } = await initProject("check-channels"));
  config = await readFile(path.join(project, "bothost.yaml"), "utf8");
  // The relay's account, and a private channel it is not subscribed to.
  const org = await readFile(path.join(project, "org.yaml"), "utf8");
  await writeFile(
    path.join(project, "org.yaml"),
    `${org.replace(
      "bots:\n",
      "bots:\n  - { email: relay-bot@sandbox.example, full_name: Relay, type: generic, owner: owner@sandbox.example }\n",
    )}  - { name: moderation, privacy: private, subscribers: [owner@sandbox.example] }\nuser_groups:\n  - { name: release-managers, members: [owner@sandbox.example] }\n`,
  );
  await writeFile(
    path.join(project, "bots", "relay.ts"),
    [
      'import { channelSetting, defineBot, groupSetting, snippetSetting, userSetting } from "bothost";',
      'import { z } from "zod";',
      "export default defineBot({",
      "  settings: z.object({",
      "    channel: channelSetting(),",
      "    also: z.array(z.object({ to: channelSetting(z.string()) })).default([]),",
      "    approvers: groupSetting().optional(),",
      "    notify: z.array(userSetting(z.email())).optional(),",
      "    snippet: snippetSetting().optional(),",
      "  }),",
      "  setup(bot) {",
      '    bot.on("message", (ctx) => ctx.reply("hi"));',
      "  },",
      "});",
      "",
    ].join("\n"),
  );
});
afterAll(async () => {
  await killAll();
  await rm(dir, { recursive: true, force: true });
});

/** The config with the relay bot, its settings as `settings` (YAML lines under `settings:`). */
async function withRelay(settings: string): Promise<string> {
  const text = `${config}  relay:\n    module: ./bots/relay.ts\n    email: relay-bot@sandbox.example\n    settings:\n${settings}`;
  await writeFile(path.join(project, "bothost.yaml"), text);
  return text;
}

/** `file:line:column` of the first `needle` in `text`, as check locates a value. */
function at(text: string, needle: string): string {
  const offset = text.indexOf(needle);
  const before = text.slice(0, offset).split("\n");
  return `bothost.yaml:${before.length}:${before.at(-1)!.length + 1}`;
}

const ADVICE =
  "names no channel the bot can see: check the spelling (or give the channel's id), and subscribe the bot to a private channel";

it("names each channel, group, user or snippet setting the bot cannot see, located, with the name meant", {
  timeout: 30_000,
}, async () => {
  const fixed = await withRelay(
    "      channel: genral\n      also:\n        - to: General\n        - to: moderation\n        - to: nowhere\n      approvers: release-manager\n" +
      // A user setting, as the welcome bot's `notify`: an address in any case names its user.
      "      notify: [Owner@Sandbox.example, ownr@sandbox.example]\n" +
      // A snippet setting, as the announcements bot's `snippet`: the bot's account has none.
      "      snippet: House rules\n",
  );
  const { code, stdout, stderr } = await runCli(["check"], { cwd: project });
  expect(code).toBe(1);
  expect(stdout).toContain(
    "1 of 2 bots has settings naming a channel, group, user or snippet it cannot see; the reasons follow on stderr.",
  );
  expect(stderr).toBe(
    [
      `bothost check: relay: ${at(fixed, "genral")} bots.relay.settings.channel: "genral" (did you mean "general"?) ${ADVICE}`,
      // Private, and the bot is not subscribed to it.
      `bothost check: relay: ${at(fixed, "moderation")} bots.relay.settings.also[1].to: "moderation" ${ADVICE}`,
      `bothost check: relay: ${at(fixed, "nowhere")} bots.relay.settings.also[2].to: "nowhere" ${ADVICE}`,
      `bothost check: relay: ${at(fixed, "release-manager")} bots.relay.settings.approvers: "release-manager" (did you mean "release-managers"?) names no user group the bot can see: check the spelling (or give the group's id)`,
      `bothost check: relay: ${at(fixed, "ownr@")} bots.relay.settings.notify[1]: "ownr@sandbox.example" (did you mean "owner@sandbox.example"?) names no user the bot can see: check the address (or give the user's id); where emails are hidden, give the one the server shows`,
      `bothost check: relay: ${at(fixed, "House rules")} bots.relay.settings.snippet: "House rules" names no saved snippet the bot can see: create it as the bot's account, or fix the title (matched exactly)`,
      "",
    ].join("\n"),
  );
  expect(hasStackTrace(stdout + stderr)).toBe(false);
});

it("a channel given by its id, or a channel or group by name in any case, passes", {
  timeout: 30_000,
}, async () => {
  await withRelay(
    "      channel: 1\n      also:\n        - to: GENERAL\n      approvers: Release-Managers\n",
  );
  const { code, stdout, stderr } = await runCli(["check"], { cwd: project });
  expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  expect(stdout).toContain("All 2 bots are ready.");
});

it("bothost run warns of them as the bot starts, and runs it", { timeout: 30_000 }, async () => {
  await withRelay("      channel: genral\n");
  const daemon = spawnCli(["run"], { cwd: project });
  const warned = await daemon.waitForLog((l) => String(l.msg).includes("the bot can see"));
  expect(warned).toMatchObject({
    level: 40,
    bot: "relay",
    settings: ["bots.relay.settings.channel"],
    msg: `bots.relay.settings.channel: "genral" (did you mean "general"?) ${ADVICE}.`,
  });
  await daemon.waitForLog((l) => l.msg === "daemon started");
  daemon.child.kill("SIGTERM");
  expect((await daemon.exited).code).toBe(0);
});

it("bothost reload says them to the operator, located, and applies the reload", {
  timeout: 40_000,
}, async () => {
  await withRelay("      channel: general\n");
  const daemon = spawnCli(["run"], { cwd: project });
  await daemon.waitForLog((l) => l.msg === "daemon started");
  const misspelt = await withRelay("      channel: genral\n");
  const { code, stdout, stderr } = await runCli(["reload"], { cwd: project });
  expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  expect(stdout.split("\n")).toEqual([
    "Restarted: relay",
    "Unchanged: 1 bot",
    `Warning: ${at(misspelt, "genral")} bots.relay.settings.channel: "genral" (did you mean "general"?) ${ADVICE}`,
    "",
  ]);
  // Said for the bots a reload starts: nothing changed, nothing said again.
  const again = JSON.parse((await runCli(["reload", "--json"], { cwd: project })).stdout);
  expect(again).toMatchObject({ refused: false, restart: [] });
  expect(again.warnings).toBeUndefined();
  // A misspelt group too, in --json as `warnings`.
  const group = await withRelay("      channel: general\n      approvers: release-manager\n");
  const json = await runCli(["reload", "--json"], { cwd: project });
  expect({ code: json.code, stderr: json.stderr }).toEqual({ code: 0, stderr: "" });
  expect(JSON.parse(json.stdout)).toMatchObject({
    refused: false,
    restart: ["relay"],
    warnings: [
      `${at(group, "release-manager")} bots.relay.settings.approvers: "release-manager" (did you mean "release-managers"?) names no user group the bot can see: check the spelling (or give the group's id)`,
    ],
  });
  daemon.child.kill("SIGTERM");
  expect((await daemon.exited).code).toBe(0);
});

it("the summary tells bots that cannot run from bots whose settings name what they cannot see", () => {
  const bot = (name: string, extra: Partial<BotCheck>): BotCheck => ({
    name,
    email: `${name}@x.example`,
    url: "http://x.example",
    authFailed: false,
    ...extra,
  });
  const summary = (checks: BotCheck[]) => formatChecks(checks).trim().split("\n").at(-1);
  const named = bot("relay", { problem: "p", settingsOnly: true });
  const refused = bot("echo", { problem: "p", authFailed: true });
  const fine = bot("hello", {});
  expect(summary([named, fine])).toBe(
    "1 of 2 bots has settings naming a channel, group, user or snippet it cannot see; the reasons follow on stderr.",
  );
  expect(summary([refused, fine])).toBe("1 of 2 bots cannot run; the reasons follow on stderr.");
  expect(summary([refused, named, { ...named, name: "two" }])).toBe(
    "1 of 3 bots cannot run, and 2 have settings naming a channel, group, user or snippet they cannot see; the reasons follow on stderr.",
  );
});
