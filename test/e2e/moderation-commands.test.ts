/**
 * The shipped moderation bot run by a real daemon (`bothost run`, a child process) against the
 * sandbox over HTTP: it answers `help`, `rules`, `stats` (moderators and above; others are
 * refused) and an unknown command with a did-you-mean, in a direct message and when mentioned.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { repoRoot } from "../support/cli.ts";
import { OWNER, startDaemon, startE2eSandbox, useE2eCleanup } from "../support/e2e-daemon.ts";

useE2eCleanup();

const MOD = "mod@sandbox.example";
const MEMBER = "member@sandbox.example";
const BOT = "moderation-bot@sandbox.example";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function moderationDaemon(): Promise<Sandbox> {
  const sandbox = await startE2eSandbox({
    realm: { name: "E2E", host: "sandbox.example", moderation_request_channel: "moderation" },
    users: [
      { email: OWNER, full_name: "Olive Owner", role: "owner" },
      { email: MOD, full_name: "Moe Moderator", role: "moderator" },
      { email: MEMBER, full_name: "Mel Member", role: "member" },
    ],
    bots: [{ email: BOT, full_name: "Moderation", type: "generic", owner: OWNER }],
    channels: [
      { name: "general", subscribers: [OWNER, MOD, MEMBER, BOT] },
      { name: "moderation", privacy: "private", subscribers: [OWNER, MOD] },
    ],
  });
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-moderation-"));
  dirs.push(dir);
  const file = path.join(dir, "bothost.yaml");
  await writeFile(
    file,
    [
      `server:\n  url: ${sandbox.url}`,
      `state:\n  path: ${path.join(dir, "state")}`,
      "log:\n  level: info\n  pretty: false",
      "shutdown_timeout: 5s",
      "bots:",
      "  moderation:",
      `    module: ${path.join(repoRoot, "bots/moderation.ts")}`,
      `    email: ${BOT}`,
      "    api_key: ${E2E_KEY_MODERATION}",
      "    settings:",
      "      rules:",
      "        flood: { max_messages: 3, per_seconds: 60 }",
      "        keywords: { words: [scam] }",
      "",
    ].join("\n"),
  );
  await startDaemon({
    dir,
    file,
    stateDir: path.join(dir, "state"),
    env: { E2E_KEY_MODERATION: sandbox.control.apiKeyOf(BOT) },
    secrets: [],
    cleanup: async () => {},
  });
  return sandbox;
}

/** Post as `from`, then wait for the bot's first message after it. */
async function ask(sandbox: Sandbox, from: string, input: Parameters<Sandbox["control"]["sendAs"]>[1]) {
  const after = sandbox.control.sendAs(from, input).id;
  const botId = sandbox.control.users().find((u) => u.email === BOT)!.user_id;
  const reply = await sandbox.control.waitFor(
    () => sandbox.control.messages().find((m) => m.sender_id === botId && (m.id as number) > after),
    { timeoutMs: 10_000 },
  );
  return reply as { content: string; type: string };
}

describe("the moderation bot's commands, run by bothost run", () => {
  it("answers help, rules, stats and unknown commands in a DM and when mentioned", async () => {
    const sandbox = await moderationDaemon();
    const dm = (from: string, content: string) => ask(sandbox, from, { type: "direct", to: [BOT], content });
    const mention = (from: string, content: string) =>
      ask(sandbox, from, { type: "stream", to: "general", topic: "bots", content: `@**Moderation** ${content}` });

    const help = await dm(MEMBER, "help");
    expect(help.content).toContain("* `rules`: the rules that are on, with their limits");
    expect(help.content).toContain(
      "* `stats`: messages flagged per rule in the last 24 hours (moderators, administrators and owners)",
    );
    expect((await mention(MEMBER, "rules")).content).toBe(
      [
        "Rules that are on:",
        "* message flood (`flood`): max messages 3, per seconds 60, report type spam",
        "* blocked word (`keywords`): words scam, report type norms",
      ].join("\n"),
    );
    expect((await dm(MEMBER, "stats")).content).toBe(
      "Sorry, only moderators, administrators and owners may run `stats`.",
    );
    const refused = await mention(MEMBER, "stats");
    expect(refused).toMatchObject({ type: "stream", content: expect.stringMatching(/^Sorry, only moderators/) });

    // A message that breaks a rule is what stats counts.
    sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "deals", content: "a scam for you" });
    // Recorded right after the report is made: ask until it is counted.
    await expect
      .poll(async () => (await dm(MOD, "stats")).content, { timeout: 10_000 })
      .toBe("Messages flagged in the last 24 hours:\n* blocked word (`keywords`): 1");
    expect((await mention(MOD, "STATS")).content).toContain("blocked word (`keywords`): 1");

    expect((await dm(MEMBER, "rulse")).content).toBe(
      "I don't know the command `rulse`. Did you mean `rules`? Say `help` for the list.",
    );
    expect((await mention(MEMBER, "stast")).content).toBe(
      "I don't know the command `stast`. Did you mean `stats`? Say `help` for the list.",
    );
  });
});
