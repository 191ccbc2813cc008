/**
 * `bothost dialogs` while the daemon's bot is still starting (its `setup` held): a real
 * `bothost run` whose bot left a dialog waiting at its last run. The listing reads that dialog
 * from the state store, saying the bot has not started yet, and an end is refused as such (not
 * "no dialog"); once the bot runs, the same end ends it. On the file store, and on Redis when
 * one answers.
 */
import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.ts";
import { crashBackends } from "../support/crash-backends.ts";
import { BOT, QUESTIONS, setUpDialogDaemon } from "../support/dialog-daemon.ts";
import { botSaid, sayToBot, useE2eCleanup } from "../support/e2e-daemon.ts";

useE2eCleanup();

const backends = await crashBackends("dialogs-bot-starting");

/** The standup bot, its `setup` held while the file `$HOLD_SETUP` exists. */
const heldBot = `import { existsSync } from "node:fs";
import standup from ${JSON.stringify(BOT)};
export default {
  ...standup,
  async setup(bot) {
    while (process.env.HOLD_SETUP && existsSync(process.env.HOLD_SETUP)) await new Promise((r) => setTimeout(r, 50));
    return standup.setup(bot);
  },
};
`;

describe.each(backends)("on the %s", (_name, backendFor) => {
  it("a starting bot's dialogs are listed from the store, and an end waits for the bot to run", {
    timeout: 60_000,
  }, async () => {
    const { sandbox, start, spawn, dir, file, key } = await setUpDialogDaemon(
      backendFor,
      "$DIR/held.mjs",
      "1h",
    );
    await writeFile(path.join(dir, "held.mjs"), heldBot);
    const hold = path.join(dir, "hold");
    let daemon = await start();
    const first = sayToBot(sandbox, "standup");
    await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(QUESTIONS.slice(0, 1));
    daemon.kill("SIGTERM");
    expect((await daemon.exited).code).toBe(0);

    await writeFile(hold, "");
    daemon = spawn({ HOLD_SETUP: hold });
    await daemon.waitForLog((l) => l.msg === "admin socket listening", 20_000);
    const cli = (...args: string[]) => runCli([...args, "--config", file], { env: key });
    const listed = await cli("dialogs", "--json");
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject([
      { bot: "standup", notStarted: true, dialogs: [{ id: String(first), step: 1 }] },
    ]);
    expect((await cli("dialogs")).stdout).toContain("the bot has not started here yet");
    const refused = await cli("dialogs", "end", "standup", String(first));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`bot "standup" has not started here yet`);

    await rm(hold);
    await daemon.waitForLog((l) => l.msg === "daemon started", 20_000);
    const ended = await cli("dialogs", "end", "standup", String(first));
    expect(ended).toMatchObject({
      code: 0,
      stdout: `Ended dialog ${first} of standup; its person is told.\n`,
    });
    await expect
      .poll(() => botSaid(sandbox).at(-1), { timeout: 15_000 })
      .toBe("An operator ended this conversation.");
  });
});
