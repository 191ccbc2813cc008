/**
 * The moderation bot when the gateway in front of the server loses the answer to its report
 * (a 502 after the server made it): the report counts as made, the handler's run again is told
 * so (`earlier: true`), and the sender is told once, as `notify_sender` promises; no second report.
 * It imports "bothost", which resolves to dist/: run `npm run build` first (`npm test` does).
 */
import { afterEach, expect, it } from "vitest";
import moderation from "../../../bots/moderation.ts";
import { startSandbox } from "../../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../../src/testing/run-bot.ts";

let sandbox: Sandbox | undefined;
let bot: TestBot | undefined;
afterEach(async () => {
  await bot?.stop({ wipe: true });
  await sandbox?.stop();
  bot = sandbox = undefined;
});

it.each([502, 504])(
  "a report whose answer a gateway lost (%i) still tells the sender, once",
  async (status) => {
    sandbox = await startSandbox({
      heartbeatSeconds: 1,
      org: {
        realm: { name: "Lost", host: "sandbox.example", moderation_request_channel: "moderation" },
        users: [
          { email: "owner@sandbox.example", full_name: "Olive Owner", role: "owner" },
          { email: "member@sandbox.example", full_name: "Mel Member", role: "member" },
        ],
        channels: [
          { name: "general", subscribers: ["owner@sandbox.example", "member@sandbox.example"] },
          { name: "moderation", privacy: "private", subscribers: ["owner@sandbox.example"] },
        ],
      },
    });
    bot = await runBot(sandbox, {
      bot: moderation,
      name: "moderation",
      config: "retries: { attempts: 3, backoff: 10ms }",
      settings: { notify_sender: "Hi {{name}}: {{details}}.", rules: { keywords: { words: ["scam"] } } },
    });
    sandbox.control.failNext(1, { status, after: true, paths: [/\/report$/] });
    const id = await bot.post("member@sandbox.example", {
      type: "channel",
      to: "general",
      topic: "deals",
      content: "a scam for you",
    });
    await bot.handled(id);
    const reports = sandbox.control
      .messages()
      .filter((m) => String(m.content).includes("reported a message"));
    expect(reports).toHaveLength(1);
    expect(bot.replies().map((r) => r.content)).toEqual(['Hi Mel Member: blocked word: uses "scam".']);
  },
);
