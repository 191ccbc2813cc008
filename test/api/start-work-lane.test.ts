/**
 * The check at a bot's start of the channels and groups its settings name (unseen-names.ts) is
 * work no person waits on: its reads wait for the account's budget in the background lane, so a
 * live reply asked after them starts first. A client against the sandbox over HTTP, its rate
 * limits on (1 call a minute, the client planning with the same), on a manual clock; the order is
 * the sandbox's, in the order it took the calls.
 */
import pino from "pino";
import { afterEach, expect, it } from "vitest";
import { warnUnseenNames } from "../../src/daemon/unseen-names.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { flushAsync } from "../support/manual-clock.ts";
import { oneCallAMinute } from "../support/minute-client.ts";

const BOT = "bot@sandbox.example";
let sandbox: Sandbox | undefined;
afterEach(() => sandbox?.stop());

it("a live reply asked while the start's check of named channels waits for the budget starts first", async () => {
  const limited = await oneCallAMinute(BOT);
  sandbox = limited.sandbox;
  const { clock, client } = limited;
  const send = (content: string) =>
    client.messages.send({ type: "channel", to: "general", topic: "t", content });
  await send("spent");
  const entries = [{ kind: "channel" as const, path: ["announce_to"], value: "general" }];
  const checked = warnUnseenNames(client, entries, pino({ level: "silent" }), new AbortController().signal);
  await flushAsync();
  const live = send("live");
  await flushAsync();
  for (let minute = 0; minute < 2; minute++) {
    await clock.tick(60_000);
    await flushAsync();
  }
  await Promise.all([checked, live]);
  const calls = sandbox.control.requests
    .filter((r) => r.email === BOT && r.status === 200)
    .map((r) => `${r.method} ${r.path}`);
  expect(calls).toEqual(["POST /messages", "POST /messages", "GET /streams"]);
});
