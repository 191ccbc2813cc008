/**
 * A handler's error that quotes one of the config's secrets (a password from its settings put in
 * a URL, the bot's API key) keeps it out of the daemon's log lines and out of the dead letter that
 * `bothost failed show` prints; a real daemon on the sandbox.
 */
import { afterEach, expect, it } from "vitest";
import { z } from "zod";
import { defineBot } from "../../src/bot/define-bot.ts";
import type { InProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const MEMBER = "member@sandbox.example";
const BOT = "hook-bot@sandbox.example";
const PASSWORD = "HookPassw0rdSecret";

const world = useSandbox({ bots: { [BOT]: "Hook" } });
let running: InProcessDaemon | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

it("hides a settings password and the API key quoted by a failed handler's error", async () => {
  const key = world.sandbox.control.apiKeyOf(BOT);
  const definition = defineBot({
    settings: z.object({ password: z.string() }),
    setup(bot, { password }) {
      bot.on("message", { sender: MEMBER }, async (ctx) => {
        if (ctx.event.message.content === "key") throw new Error(`refused for key ${key}`);
        // fetch refuses a URL with credentials, quoting the whole URL in its error.
        await fetch(`https://deploy:${password}@ci.example.org/go`, { method: "POST" });
      });
    },
  });
  const extra = `retries: { attempts: 1 }\nsettings: { password: ${PASSWORD} }`;
  running = await world.daemon({ hook: { email: BOT, definition, extra } });
  for (const content of ["url", "key"])
    world.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: content, content });
  const d = running;
  await expect.poll(async () => (await d.daemon.letters.list()).length, { timeout: 5_000 }).toBe(2);

  const letters = await d.daemon.letters.list();
  const errors = letters.map((l) => `${l.error.message}\n${l.error.stack}`).join("\n");
  expect(errors).toContain("includes credentials: https://deploy:[hidden]@ci.example.org/go");
  expect(errors).toContain("refused for key [hidden]");
  const text = d.logText();
  expect(text).toContain("includes credentials: https://deploy:[redacted]@ci.example.org/go");
  expect(text).toContain("refused for key [redacted]");
  for (const secret of [PASSWORD, key]) {
    expect(errors).not.toContain(secret);
    expect(text).not.toContain(secret);
  }
});

it("hides a settings password that a failed setup's error quotes from the bot's status", async () => {
  const definition = defineBot({
    settings: z.object({ password: z.string() }),
    setup(_bot, { password }) {
      // fetch's Request refuses a URL with credentials, quoting the whole URL in its error.
      new Request(`https://deploy:${password}@ci.example.org/go`);
    },
  });
  running = await world.daemon({
    hook: { email: BOT, definition, extra: `settings: { password: ${PASSWORD} }` },
  });
  expect(running.report.failed.map((f) => f.name)).toEqual(["hook"]);
  const [status] = (await running.daemon.status()).bots;
  expect(status?.reason).toContain("includes credentials: https://deploy:[hidden]@ci.example.org/go");
  expect(JSON.stringify(await running.daemon.status())).not.toContain(PASSWORD);
  expect(running.logText()).not.toContain(PASSWORD);
});
