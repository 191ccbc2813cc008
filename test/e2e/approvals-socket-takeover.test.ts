/**
 * Two instances of the approvals bot's daemon on one machine, one config, Redis state (as during
 * a rolling deploy): the first holds the admin socket, the second runs without it. The first is
 * killed (kill -9) while a request waits; the second takes the bot over, and the admin socket
 * too: an operator's `bothost dialogs end` reaches it and ends the request, the requester told
 * once.
 */
import { describe, expect, it } from "vitest";
import * as A from "../support/approvals-daemon.ts";
import { runCli } from "../support/cli.ts";
import { crashBackends } from "../support/crash-backends.ts";
import { RELEASE_ORG } from "../support/release-org.ts";
import { postedBy, shippedBot, useShippedBots } from "../support/shipped-bot.ts";

useShippedBots();

const backends = await crashBackends("approvals-socket-takeover");
const NOTE = "@**Rae Requester|3** Ended by the release team.";

describe.runIf(backends.length > 1)("on Redis", () => {
  it("the second instance takes the admin socket once the first is killed: `dialogs end` reaches it", {
    timeout: 60_000,
  }, async () => {
    const redis = backends[1]![1];
    const bot = await shippedBot({
      org: RELEASE_ORG,
      name: "approvals",
      module: "approvals.ts",
      email: A.BOT,
      settings: ["group: release-managers"],
      state: (dir) => redis(dir).yaml,
    });
    const first = await bot.start();
    const second = bot.launch();
    await second.waitForLog(
      (l) => l.msg === "another daemon answers on the admin socket: this one runs without it",
    );
    const asked = bot.sandbox.control.sendAs(A.REQ, { ...A.topic, content: A.ask("api 1.4.2") }).id;
    await A.buttonsOn(bot, A.question("api 1.4.2"));
    first.kill("SIGKILL");
    await first.exited;
    await second.waitForLog((l) => l.msg === "admin socket listening", 20_000);
    const end = await runCli([
      "dialogs",
      "end",
      "approvals",
      String(asked),
      "--note",
      "Ended by the release team.",
      "-c",
      bot.config,
    ]);
    expect(end.stderr).toBe("");
    expect(end.code).toBe(0);
    await expect
      .poll(() => postedBy(bot.sandbox, A.BOT), { timeout: 15_000 })
      .toEqual([A.question("api 1.4.2"), NOTE]);
    second.kill("SIGTERM");
    expect(await second.exited).toEqual({ code: 0, signal: null });
  });
});
