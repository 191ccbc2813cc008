import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runScheduleCommand } from "../../src/cli/schedule.ts";

let dir: string;
let out: string[];
let err: string[];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "bothost-preview-"));
  out = [];
  err = [];
  vi.spyOn(process.stdout, "write").mockImplementation((chunk) => out.push(String(chunk)) > 0);
  vi.spyOn(process.stderr, "write").mockImplementation((chunk) => err.push(String(chunk)) > 0);
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

/** A config with one bot per module text, each module in its own file. */
async function config(modules: Record<string, string>, extra = ""): Promise<string> {
  const bots: string[] = [];
  for (const [name, text] of Object.entries(modules)) {
    await writeFile(join(dir, `${name}.mjs`), text);
    bots.push(
      `  ${name}:\n    module: ./${name}.mjs\n    email: ${name}@chat.example.org\n    api_key: abc${extra}`,
    );
  }
  const file = join(dir, "bothost.yaml");
  await writeFile(file, `server:\n  url: https://chat.example.org\nbots:\n${bots.join("\n")}\n`);
  return file;
}

const herald = `export default {
  setup(bot) {
    bot.recurring("standup", { cron: "0 9 * * *", timezone: "Europe/Berlin", to: "team", topic: "standup", content: "Standup!" });
    bot.recurring("payday", { cron: "0 12 L * *", timezone: "America/New_York", to: ["ann@example.org", 7], content: () => "Payday" });
    bot.cron("*/30 * * * *", { missed: "run-once" }, () => {});
  },
};
`;

describe("bothost schedule preview", () => {
  it("says the next run, not 1 runs, for --count 1", async () => {
    const file = await config({ herald });
    const code = await runScheduleCommand([
      "preview",
      "--config",
      file,
      "-n",
      "1",
      "--from",
      "2026-03-27T10:00:00Z",
    ]);
    expect(code).toBe(0);
    expect(out.join("")).toMatch(/^Next run after 2026-03-27T10:00:00.000Z:\n/);
  });

  it("prints each schedule's next runs in its time zone and UTC (across the DST change), offline", async () => {
    const file = await config({ herald, quiet: "export default { setup() {} };\n" });
    const code = await runScheduleCommand([
      "preview",
      "--config",
      file,
      "--count",
      "3",
      "--from",
      "2026-03-27T10:00:00Z",
    ]);
    expect(err.join("")).toBe("");
    expect(code).toBe(0);
    expect(out.join("")).toBe(`Next 3 runs after 2026-03-27T10:00:00.000Z:

herald:
  announcement "standup" → channel "team" › standup
    "0 9 * * *" in Europe/Berlin
    Sat 2026-03-28 09:00 +01:00 (2026-03-28T08:00:00Z)
    Sun 2026-03-29 09:00 +02:00 (2026-03-29T07:00:00Z)
    Mon 2026-03-30 09:00 +02:00 (2026-03-30T07:00:00Z)
  announcement "payday" → direct message to ann@example.org, 7
    "0 12 L * *" in America/New_York
    Tue 2026-03-31 12:00 -04:00 (2026-03-31T16:00:00Z)
    Thu 2026-04-30 12:00 -04:00 (2026-04-30T16:00:00Z)
    Sun 2026-05-31 12:00 -04:00 (2026-05-31T16:00:00Z)
  cron job "*/30 * * * * UTC" (runs in this process; missed runs: run-once)
    "*/30 * * * *" in UTC
    Fri 2026-03-27 10:30 +00:00 (2026-03-27T10:30:00Z)
    Fri 2026-03-27 11:00 +00:00 (2026-03-27T11:00:00Z)
    Fri 2026-03-27 11:30 +00:00 (2026-03-27T11:30:00Z)

quiet: no recurring announcements or cron jobs
`);
  });

  it("a bad declaration exits 2 naming the bot, the call and the field", async () => {
    const file = await config({
      herald: `export default { setup(bot) { bot.recurring("standup", { cron: "0 25 * * *", timezone: "UTC", to: "team", topic: "t", content: "x" }); } };\n`,
    });
    expect(await runScheduleCommand(["preview", "--config", file])).toBe(2);
    expect(err.join("")).toBe(
      `bothost schedule preview: bots.herald: ${join(dir, "herald.mjs")}:1:35: bot.recurring("standup").cron "0 25 * * *": hour 25 is out of range (0-23). [BOT_SETUP_INVALID]\n`,
    );
    expect(out).toEqual([]);
  });

  it("a setup that calls the server fails with a message saying preview runs offline (exit 1)", async () => {
    const file = await config({
      herald: "export default { async setup(bot) { await bot.api.users.me(); } };\n",
    });
    expect(await runScheduleCommand(["preview", "--config", file])).toBe(1);
    expect(err.join("")).toBe(
      'bothost schedule preview: bots.herald: setup failed: bot.api.users was used during setup; "bothost schedule preview" runs setup offline. Call the server from handlers or jobs, not from setup. [PREVIEW_OFFLINE]\n',
    );
  });

  it("config problems exit 2 with their file:line location; usage mistakes exit 2 with the fix", async () => {
    const file = join(dir, "bothost.yaml");
    await writeFile(
      file,
      "bots:\n  herald:\n    module: ./missing.mjs\n    email: h@chat.example.org\n    api_key: abc\n",
    );
    expect(await runScheduleCommand(["preview", "-c", file])).toBe(2);
    expect(err.join("")).toBe(
      `${file}:2:3 bots.herald: has no server: add server: { url: https://chat.example.org } at the top of the file, or to this bot\n`,
    );
    err.length = 0;
    expect(await runScheduleCommand(["preview", "--count", "0"])).toBe(2);
    expect(err.join("")).toBe(
      'bothost schedule: --count must be a whole number from 1 to 100, got "0". Run "bothost schedule --help" for the options.\n',
    );
    err.length = 0;
    expect(await runScheduleCommand(["show"])).toBe(2);
    expect(err.join("")).toBe(
      'bothost schedule: unknown subcommand "show" (known: preview). Run "bothost schedule --help" for the options.\n',
    );
    err.length = 0;
    expect(await runScheduleCommand(["prevew"])).toBe(2);
    expect(err.join("")).toContain('unknown subcommand "prevew" (did you mean "preview"?)');
    err.length = 0;
    expect(await runScheduleCommand(["preview", "now"])).toBe(2);
    expect(err.join("")).toContain("preview takes no arguments (got now)");
    err.length = 0;
    expect(await runScheduleCommand(["preview", "--frm", "x"])).toBe(2);
    expect(err.join("")).toBe(
      'bothost schedule: Unknown option \'--frm\' (did you mean "--from"?). Run "bothost schedule --help" for the options.\n',
    );
  });
});
