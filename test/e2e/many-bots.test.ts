/**
 * Ten bots in one `bothost run` process, each subscribed to a different channel: each handles
 * exactly the messages of its own channel (and its own direct messages), once.
 */
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/types.ts";
import {
  botEmail,
  type E2eConfig,
  expectExactlyOnce,
  expectNoSecrets,
  MEMBER,
  orgWithBots,
  replies,
  send,
  startDaemon,
  startE2eSandbox,
  useE2eCleanup,
  waitForAnswers,
  writeConfig,
} from "../support/e2e-daemon.ts";

const BOTS = 10;
let sandbox: Sandbox | undefined;
let config: E2eConfig | undefined;

useE2eCleanup();

describe("many bots in one daemon", () => {
  it("gives each bot only its own channel's messages and direct messages, each handled once", async () => {
    sandbox = await startE2eSandbox(orgWithBots(BOTS));
    const names = Array.from({ length: BOTS }, (_, i) => `b${i}`);
    config = await writeConfig(sandbox, Object.fromEntries(names.map((n, i) => [n, { email: botEmail(i) }])));
    const daemon = await startDaemon(config);
    expect(daemon.logs().find((l) => l.msg === "daemon started")).toMatchObject({
      started: BOTS,
      authFailed: [],
      failed: [],
    });
    const sentTo = new Map<string, number[]>(names.map((n) => [n, []]));
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < BOTS; i++) sentTo.get(`b${i}`)!.push(send(sandbox, `task ${round}`, `c${i}`));
    }
    const dm = sandbox.control.sendAs(MEMBER, { type: "direct", to: [botEmail(3)], content: "task dm" }).id;
    sentTo.get("b3")!.push(dm);
    const all = [...sentTo.values()].flat();
    await waitForAnswers(sandbox, all);

    expectExactlyOnce(sandbox, all);
    const handledBy = new Map<string, number[]>(names.map((n) => [n, []]));
    for (const r of replies(sandbox)) handledBy.get(r.bot)!.push(r.id);
    for (const name of names) expect(handledBy.get(name)!.sort()).toEqual(sentTo.get(name)!.sort());
    // The handlers ran in the bot that owns the channel (the log lines carry the bot's name). The
    // child's log lines reach this process through a pipe, possibly after the replies.
    const handlingLines = () => daemon.logs().filter((l) => l.msg === "e2e: handling");
    await expect.poll(() => handlingLines().length).toBe(all.length);
    const handling = handlingLines();
    for (const line of handling) expect(sentTo.get(String(line.bot))).toContain(line.messageId);
    expect(handling).toHaveLength(all.length);

    daemon.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    expect(sandbox.control.queues()).toEqual([]);
    expectNoSecrets(daemon, config.secrets);
  });
});
