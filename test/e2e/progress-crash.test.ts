/**
 * A bot's progress message (`ctx.progress`, test/fixtures/e2e/progress-steps.mjs) under
 * `bothost run`, killed (kill -9) right after the server made one of its calls and before the
 * daemon read the answer: the placeholder's post, the final edit; and right after the post, its
 * answer read, before its step's record was written (crash point `progress-posted`). Started
 * again on the same state, the handler runs again and the progress goes on: the conversation
 * holds one progress message, showing the final text, and the asker's message ends with the
 * `done` reaction alone.
 */
import { expect, it } from "vitest";
import type { ResponseRecord } from "../../src/sandbox/types.ts";
import { botEmail, MEMBER, orgWithBots } from "../support/e2e-daemon.ts";
import { postedBy, shippedBot, useShippedBots } from "../support/shipped-bot.ts";

useShippedBots();

const FINAL = "Built: 3 steps.";
const BOT = botEmail(0);

/** Where to kill: the response that makes it so, given what the bot's messages show then; or a crash point. */
const POINTS: Array<[string, ((r: ResponseRecord, shown: string[]) => boolean) | "progress-posted"]> = [
  ["the placeholder's post", (r) => r.method === "POST" && r.route === "/messages"],
  ["the final edit", (r, shown) => r.method === "PATCH" && shown[0] === FINAL],
  ["the placeholder's post, its answer read (`progress-posted`)", "progress-posted"],
];

it.each(POINTS)(
  "killed as the server made %s: one message, in its final state",
  { timeout: 30_000 },
  async (_name, at) => {
    const bot = await shippedBot({
      org: orgWithBots(1),
      name: "progress",
      module: "../test/fixtures/e2e/progress-steps.mjs",
      email: BOT,
      settings: [],
    });
    const { control } = bot.sandbox;
    const daemon = await bot.start(typeof at === "string" ? { BOTHOST_FAILPOINTS: at } : {});
    if (typeof at !== "string")
      bot.onResponse = (r) => {
        if (!at(r, postedBy(bot.sandbox, BOT))) return;
        bot.onResponse = undefined;
        daemon.kill("SIGKILL");
      };
    const asked = control.sendAs(MEMBER, { type: "direct", to: [BOT], content: "build" }).id;
    expect(await daemon.exited).toEqual({ code: null, signal: "SIGKILL" });
    const again = await bot.start();
    const botId = control.users().find((u) => u.email === BOT)!.user_id;
    const acks = () =>
      ((control.messageView(asked)?.reactions ?? []) as Array<{ user_id: number; emoji_name: string }>)
        .filter((r) => r.user_id === botId)
        .map((r) => r.emoji_name);
    await control.waitFor(() => acks().includes("check"), { timeoutMs: 20_000 });
    expect(acks()).toEqual(["check"]);
    expect(postedBy(bot.sandbox, BOT)).toEqual([FINAL]);
    again.kill("SIGTERM");
    expect(await again.exited).toEqual({ code: 0, signal: null });
  },
);
