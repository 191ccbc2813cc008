/**
 * The announcements bot's `topic` setting under `bothost run` against the sandbox: a template
 * mistake (an unknown placeholder, a topic that renders too long) is a settings problem, reported
 * at its config line with its path and exit code 2, like the bot's other settings, not a setup
 * failure that names no line.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeAll, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import { assertBuilt, killAll, repoRoot, spawnCli } from "../support/cli.ts";

const BOT = "announce-bot@sandbox.example";
const opened: Array<() => Promise<unknown>> = [];
beforeAll(assertBuilt);
afterEach(async () => {
  await killAll();
  for (const close of opened.splice(0).reverse()) await close();
});

it("reports a bad topic template at its config line, exit 2", async () => {
  const sandbox = await startSandbox({
    org: {
      realm: { name: "Sandbox", host: "sandbox.example" },
      users: [{ email: "owner@sandbox.example", full_name: "Olive Owner", role: "owner" }],
      bots: [{ email: BOT, full_name: "Announcements", type: "generic", owner: "owner@sandbox.example" }],
      channels: [{ name: "team", subscribers: ["owner@sandbox.example", BOT] }],
    },
  });
  opened.push(() => sandbox.stop());
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-announce-topic-"));
  opened.push(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, "bothost.yaml");
  const long = `${"x".repeat(55)} {{weekday}}`;
  await writeFile(
    file,
    [
      `server:\n  url: ${sandbox.url}`,
      `state:\n  path: ${path.join(dir, "state")}`,
      "bots:",
      "  announcements:",
      `    module: ${path.join(repoRoot, "bots/announcements.ts")}`,
      `    email: ${BOT}`,
      `    api_key: \${KEY}`,
      "    settings:",
      "      announcements:",
      '        - { id: standup, cron: "0 9 * * 1-5", channel: team, topic: "standup {{dat}}", content: hi }',
      `        - { id: weekly, cron: "0 9 * * 1", channel: team, topic: "${long}", content: hi }`,
    ].join("\n") + "\n",
  );
  const daemon = spawnCli(["run", "--config", file], { env: { KEY: sandbox.control.apiKeyOf(BOT) } });
  expect(await daemon.exited).toEqual({ code: 2, signal: null });
  const lines = daemon.stderr().trim().split("\n");
  expect(lines).toContain(
    `${file}:12:69 bots.announcements.settings.announcements[0].topic: uses {{dat}}; the placeholders are {{date}}, {{weekday}}, {{time}}`,
  );
  expect(lines).toContain(
    `${file}:13:66 bots.announcements.settings.announcements[1].topic: renders up to 65 characters; topics are at most 60`,
  );
  expect(daemon.stderr()).not.toMatch(/\n\s+at /);
});
