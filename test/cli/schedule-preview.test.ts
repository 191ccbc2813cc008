/**
 * `bothost schedule preview` is offline: the config of docs/guide/scheduling.md previews with its
 * API key variable unset in the shell, saying so on stderr; other problems still fail the command.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, hasStackTrace, repoRoot, runCli } from "../support/cli.ts";

let dir: string;
let config: string;

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(path.join(tmpdir(), "bothost-schedule-"));
  // The announcements bot's YAML sample from the scheduling guide, its module made absolute.
  const guide = await readFile(path.join(repoRoot, "docs/guide/scheduling.md"), "utf8");
  const sample = /```yaml\n(bots:\n {2}announcements:[\s\S]*?)```/.exec(guide)?.[1];
  expect(sample, "the guide's announcements sample").toBeDefined();
  expect(sample).toContain("api_key: $" + "{ANNOUNCE_BOT_API_KEY}");
  // A user's project has no bots/ of bothost's: the sample names the installed package's file.
  expect(sample).toContain("module: ./node_modules/bothost/bots/announcements.ts");
  config = path.join(dir, "bothost.yaml");
  await writeFile(
    config,
    `server:\n  url: https://chat.example.org\n${sample!.replace("./node_modules/bothost/bots/announcements.ts", path.join(repoRoot, "bots/announcements.ts"))}`,
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("bothost schedule preview", () => {
  it("previews a config whose API key variable is not set here, saying so on stderr", async () => {
    const { code, stdout, stderr } = await runCli([
      "schedule",
      "preview",
      "--config",
      config,
      "--count",
      "2",
      "--from",
      "2026-03-27T10:00:00Z",
    ]);
    expect(stderr).toBe(
      "bothost schedule preview: ANNOUNCE_BOT_API_KEY is not set here; read as a placeholder (nothing is sent).\n",
    );
    expect(code).toBe(0);
    expect(stdout).toContain('announcement "standup" → channel "team" › standup');
    expect(stdout).toContain("Mon 2026-03-30 09:00 +02:00 (2026-03-30T07:00:00Z)");
    expect(stdout).toContain('announcement "weekly-rules"');
  });

  it("with the variable set, prints no note", async () => {
    const { code, stderr } = await runCli(["schedule", "preview", "--config", config], {
      env: { ANNOUNCE_BOT_API_KEY: "fake-key-0042" },
    });
    expect(stderr).toBe("");
    expect(code).toBe(0);
  });

  it("any other problem fails as run would, with the unset variable among the located problems", async () => {
    const broken = path.join(dir, "broken.yaml");
    await writeFile(broken, `${await readFile(config, "utf8")}    concurrency: many\n`);
    const { code, stdout, stderr } = await runCli(["schedule", "preview", "--config", broken]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain("environment variable ANNOUNCE_BOT_API_KEY is not set");
    expect(stderr).toContain("bots.announcements.concurrency");
    expect(hasStackTrace(stderr)).toBe(false);
  });
});
