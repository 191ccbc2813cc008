/**
 * Durable dialogs through real processes on Redis only: a second instance takes a killed one's
 * bot over mid-dialog, and an answer sent while Redis is down is recorded once it is back. Apart
 * from dialog-crash.test.ts so that a machine without Redis skips this whole file at once.
 */
import { describe, expect, it } from "vitest";
import { hasRedisServer, startOwnRedis } from "../support/cluster.ts";
import { crashBackends } from "../support/crash-backends.ts";
import { QUESTIONS, SUMMARY, setUpDialogDaemon } from "../support/dialog-daemon.ts";
import { botSaid, sayToBot as say, useE2eCleanup } from "../support/e2e-daemon.ts";

useE2eCleanup();

const backends = await crashBackends("dialog-crash-redis");

describe.runIf(backends.length > 1)("failover on Redis", () => {
  it("a second instance takes the bot over when the first is killed; the dialog goes on there", async () => {
    const { sandbox, start } = await setUpDialogDaemon(backends[1]![1]);
    const first = await start();
    const second = await start(); // on standby while the first holds the bot's lease
    say(sandbox, "standup");
    await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(QUESTIONS.slice(0, 1));
    first.kill("SIGKILL");
    say(sandbox, "did a");
    await expect.poll(() => botSaid(sandbox), { timeout: 20_000 }).toEqual(QUESTIONS.slice(0, 2));
    say(sandbox, "do b");
    await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(QUESTIONS);
    say(sandbox, "none");
    await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual([...QUESTIONS, SUMMARY]);
    second.kill("SIGTERM");
    expect(await second.exited).toEqual({ code: 0, signal: null });
  }, 60_000);
});

describe.runIf(hasRedisServer())("a Redis outage", () => {
  it("an answer sent while Redis is down is recorded once it is back; the dialog goes on", async () => {
    const redis = await startOwnRedis();
    try {
      const { sandbox, start } = await setUpDialogDaemon(() => ({
        yaml: `state:\n  redis: ${redis.url}\n  prefix: dialog-outage`,
        open: async () => {
          throw new Error("not read directly");
        },
      }));
      const daemon = await start();
      say(sandbox, "standup");
      await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(QUESTIONS.slice(0, 1));
      const down = redis.restart(2_000);
      say(sandbox, "did a");
      await down;
      await expect.poll(() => botSaid(sandbox), { timeout: 30_000 }).toEqual(QUESTIONS.slice(0, 2));
      say(sandbox, "do b");
      await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(QUESTIONS);
      daemon.kill("SIGTERM");
      await daemon.exited;
    } finally {
      await redis.stop();
    }
  }, 90_000);
});
