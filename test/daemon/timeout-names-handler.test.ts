/**
 * A handler that hangs past `handler_timeout` throws nothing and has no stack to show: the
 * timeout's line names the handler it is in (a command, an `on()` route, a middleware come back
 * to after its `next()`) and where the bot's code registered it, on its first attempt and on a
 * later one. A real daemon and sandbox on a held clock.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import { defineBot } from "../../src/bot/define-bot.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const MEMBER = "member@sandbox.example";
const BOT = "slow-bot@sandbox.example";
const world = useSandbox({ bots: { [BOT]: "Slow" } });

/** This file's line holding `text`, counted from 1, as a place names it. */
function lineOf(text: string): number {
  const lines = readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n");
  return lines.findIndex((l) => l.includes(text)) + 1;
}
const HERE = "test/daemon/timeout-names-handler.test.ts";

it("names the command, the route or the middleware a run timed out in, and where it was registered", async () => {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  let tries = 0;
  const definition = defineBot({
    setup(bot: BotApi) {
      // MIDDLEWARE
      bot.use(async (ctx, next) => {
        await next();
        if (ctx.event.type === "message" && ctx.text === "after") await opened;
      });
      // COMMAND
      bot.command("deploy", async () => {
        await opened;
      });
      // LATER
      bot.command("flaky", async () => {
        tries++;
        if (tries === 1) throw new Error("first attempt fails at once");
        await opened;
      });
      // ROUTE
      bot.on("message", { sender: MEMBER }, async (ctx) => {
        if (ctx.event.message.content === "route") await opened;
      });
    },
  });
  const clock = new ManualClock(Date.now());
  const extra = "handler_timeout: 6s\nretries: { attempts: 2, backoff: 1s }";
  const d = await world.daemon({ slow: { email: BOT, definition, extra } }, { clock });
  const send = (topic: string, content: string) =>
    world.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic, content });
  for (const [topic, content] of [
    ["a", "@**Slow** deploy"],
    ["b", "route"],
    ["c", "after"],
    ["d", "@**Slow** flaky"],
  ])
    send(topic as string, content as string);
  const timedOut = () => d.logged("handler timed out");
  await expect
    .poll(
      async () => {
        await clock.tick(500);
        return timedOut().length;
      },
      { timeout: 15_000 },
    )
    .toBe(4);
  const said = Object.fromEntries(timedOut().map((l) => [l.conversation, [l.msg, l.handler]]));
  // The registration's call is on the line after its marker.
  const placed = (what: string, marker: string) => `${what} (${HERE}:${lineOf(`// ${marker}`) + 1}:`;
  const first = "handler timed out; its signal was aborted and the queue moved on";
  expect(said["channel:1:a"]?.[0]).toBe(first);
  expect(said["channel:1:a"]?.[1]).toContain(placed('command "deploy"', "COMMAND"));
  expect(said["channel:1:b"]?.[1]).toContain(placed('on("message")', "ROUTE"));
  // The route ended: the middleware, come back to from its `next()`, is where the run hangs.
  expect(said["channel:1:c"]?.[1]).toContain(placed("use()", "MIDDLEWARE"));
  expect(said["channel:1:d"]).toEqual([
    "handler timed out on a later attempt; its signal was aborted",
    expect.stringContaining(placed('command "flaky"', "LATER")),
  ]);
  open();
});
