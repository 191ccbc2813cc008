/**
 * The standup bot's schedule settings under `bothost run` against the sandbox: a bad `cron`, an
 * unknown `timezone`, a `wait` that is no duration, or a `wait` so long that a person's questions
 * could still wait at the schedule's next run is a settings problem, reported at its config
 * line with its path and exit code 2, not a start failure naming no line (cron) or an error only
 * when the questions go out (time zone, wait).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeAll, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import { assertBuilt, killAll, repoRoot, spawnCli } from "../support/cli.ts";

const BOT = "standup-bot@sandbox.example";
const opened: Array<() => Promise<unknown>> = [];
beforeAll(assertBuilt);
afterEach(async () => {
  await killAll();
  for (const close of opened.splice(0).reverse()) await close();
});

it("reports bad schedule settings at their config lines, exit 2", async () => {
  const sandbox = await startSandbox({
    org: {
      realm: { name: "Sandbox", host: "sandbox.example" },
      users: [{ email: "owner@sandbox.example", full_name: "Olive Owner", role: "owner" }],
      bots: [{ email: BOT, full_name: "Standup", type: "generic", owner: "owner@sandbox.example" }],
      channels: [{ name: "team", subscribers: ["owner@sandbox.example", BOT] }],
      user_groups: [{ name: "devs", members: ["owner@sandbox.example"] }],
    },
  });
  opened.push(() => sandbox.stop());
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-standup-config-"));
  opened.push(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, "bothost.yaml");
  const run = async (cron: string, timezone: string, wait: string) => {
    await writeFile(
      file,
      [
        `server:\n  url: ${sandbox.url}`,
        `state:\n  path: ${path.join(dir, "state")}`,
        "bots:",
        "  standup:",
        `    module: ${path.join(repoRoot, "bots/standup.ts")}`,
        `    email: ${BOT}`,
        `    api_key: \${KEY}`,
        "    settings:",
        "      group: devs",
        "      channel: team",
        `      cron: "${cron}"`,
        `      timezone: ${timezone}`,
        `      wait: ${wait}`,
      ].join("\n") + "\n",
    );
    const daemon = spawnCli(["run", "--config", file], { env: { KEY: sandbox.control.apiKeyOf(BOT) } });
    expect(await daemon.exited).toEqual({ code: 2, signal: null });
    expect(daemon.stderr()).not.toMatch(/\n\s+at /);
    return daemon.stderr().trim().split("\n");
  };
  expect(await run("30 9 * * 1-5", "Europe/Berlinn", "4 hours")).toEqual([
    `${file}:14:17 bots.standup.settings.timezone: timezone "Europe/Berlinn" is not a known IANA time zone; did you mean "Europe/Berlin"?`,
    `${file}:15:13 bots.standup.settings.wait: must be a duration such as "4h", "90m" or "1h30m"`,
  ]);
  // A wrong time zone hides no mistake of the cron.
  expect(await run("30 25 * * 1-5", "Europe/Berlinn", "4h")).toEqual([
    `${file}:13:13 bots.standup.settings.cron: cron "30 25 * * 1-5": hour 25 is out of range (0-23).`,
    `${file}:14:17 bots.standup.settings.timezone: timezone "Europe/Berlinn" is not a known IANA time zone; did you mean "Europe/Berlin"?`,
  ]);
  // Each question waits up to `wait`: three of 9h could still wait at the next day's set time;
  // the day Europe/Berlin moves its clocks forward, that set time is 23h after the one before.
  expect(await run("30 9 * * *", "Europe/Berlin", "9h")).toEqual([
    `${file}:15:13 bots.standup.settings.wait: each of the 3 questions waits up to 9h, so a person's questions can take 1d3h, but cron "30 9 * * *" (Europe/Berlin) can run again after 23h: set wait under 7h40m`,
  ]);
  // Hourly on weekdays: the shortest gap is the hour, not the weekend.
  expect(await run("0 9-17 * * 1-5", "UTC", "20m")).toEqual([
    `${file}:15:13 bots.standup.settings.wait: each of the 3 questions waits up to 20m, so a person's questions can take 1h, but cron "0 9-17 * * 1-5" (UTC) can run again after 1h: set wait under 20m`,
  ]);
});
