import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const cli = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

describe("bothost demo", () => {
  it("plays the whole scene against the embedded sandbox and exits 0", () => {
    const run = spawnSync(process.execPath, [cli, "demo"], { encoding: "utf8", timeout: 60_000 });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("Scene complete: all");
    expect(run.stdout).not.toContain("✗");
    // The echo bot's answers, in the channel and by direct message.
    expect(run.stdout).toMatch(/#general › hello {2}Echo: echo: are you there\?/);
    expect(run.stdout).toMatch(/DM \(Bob Builder, Echo\) {2}Echo: echo: Hi Echo, just us\./);
    // The moderation bot reported the flood (the server's report lands in #moderation) and told Mallory.
    expect(run.stdout).toMatch(
      /#moderation › Mallory Spammer moderation {2}Notification Bot: .*reported a message sent by/,
    );
    expect(run.stdout).toContain("**Spam**. Flagged by the moderation bot (flood)");
    expect(run.stdout).toMatch(
      /DM \(Mallory Spammer, Moderation Bot\) {2}Moderation Bot: Hi Mallory Spammer/,
    );
    // A command: the moderation bot lists its rules where it was asked.
    expect(run.stdout).toMatch(/#general › house rules {2}Moderation Bot: Rules that are on:/);
    // The welcome bot greeted the new member.
    expect(run.stdout).toMatch(
      /DM \(Welcome Bot, Carol Newcomer\) {2}Welcome Bot: Welcome aboard, Carol Newcomer!/,
    );
    // The server delivered the announcement the bot had booked.
    expect(run.stdout).toMatch(/#announcements › weekly status {2}Announcements: Good morning!/);
  });

  it("prints its usage with --help", () => {
    const run = spawnSync(process.execPath, [cli, "demo", "--help"], { encoding: "utf8" });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("Usage: bothost demo [--follow] [--verbose]");
  });
});
