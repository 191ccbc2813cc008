/**
 * The standup bot (bots/standup.ts) under `bothost run`, `standup skip sick` killed (kill -9) right
 * after one of its sends was answered by the server and before the daemon recorded it
 * (`message-sent`): the day's post, then the reply. Started again on the same state (file store,
 * and Redis when one answers), the skip is posted once and answered once; a second `standup skip`
 * that day is told `You are done for today.` and posts nothing.
 */
import { describe, expect, it } from "vitest";
import { casesOn, crashBackends } from "../support/crash-backends.ts";
import { postedBy, shippedBot, useShippedBots } from "../support/shipped-bot.ts";

useShippedBots();
const BOT = "standup-bot@sandbox.example";
const OWNER = "owner@sandbox.example";
const MEMBER = "member@sandbox.example";
const backends = await crashBackends("standup-skip-crash");
const SKIPPED = ["**Mel Member** skips today: sick.", "Skipped for today."];

describe.each(backends)("on the %s", (name, backendFor) => {
  it.each(casesOn(name, ["message-sent@1", "message-sent@2"], (p) => p === "message-sent@1"))(
    "standup skip killed at %s: posted once; skipped again, told done",
    { timeout: 60_000 },
    async (point) => {
      const bot = await shippedBot({
        org: {
          realm: { name: "Sandbox", host: "sandbox.example" },
          users: [
            { email: OWNER, full_name: "Olive Owner", role: "owner" },
            { email: MEMBER, full_name: "Mel Member" },
          ],
          bots: [{ email: BOT, full_name: "Standup", type: "generic", owner: OWNER }],
          channels: [{ name: "standups", subscribers: [OWNER, MEMBER, BOT] }],
          user_groups: [{ name: "engineering", members: [OWNER, MEMBER] }],
        },
        name: "standup",
        module: "standup.ts",
        email: BOT,
        settings: ["group: engineering", "channel: standups"],
        state: (dir) => backendFor(dir).yaml,
      });
      const said = () => postedBy(bot.sandbox, BOT);
      const first = await bot.start({ BOTHOST_FAILPOINTS: point });
      bot.sandbox.control.sendAs(MEMBER, { type: "direct", to: [BOT], content: "standup skip sick" });
      expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });

      await bot.start();
      await expect.poll(said, { timeout: 15_000 }).toEqual(SKIPPED);
      bot.sandbox.control.sendAs(MEMBER, { type: "direct", to: [BOT], content: "standup skip" });
      await expect.poll(said, { timeout: 15_000 }).toEqual([...SKIPPED, "You are done for today."]);
    },
  );
});
