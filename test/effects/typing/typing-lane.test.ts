/**
 * `ctx.typing` notices wait for the account's budget in the run's lane: a dead letter's replay
 * (its signal given the background lane) lets a live reply asked after its start and its stop
 * go first. So do the calls the work makes with the signal `during` gives it. The bot's helpers on a client against the sandbox over HTTP, one call a minute
 * allowed; the order is the sandbox's, in the order it took the calls.
 */
import { pino } from "pino";
import { afterEach, expect, it } from "vitest";
import { callLaneOf } from "../../../src/api/budget-line.ts";
import { serverInfoFrom } from "../../../src/api/server-info.ts";
import { BotServices } from "../../../src/effects/bot-services.ts";
import type { Sandbox } from "../../../src/sandbox/types.ts";
import { MemoryStore } from "../../../src/state/memory-store.ts";
import { flushAsync } from "../../support/manual-clock.ts";
import { oneCallAMinute } from "../../support/minute-client.ts";

const BOT = "bot@sandbox.example";
const MEMBER = "member@sandbox.example";
let sandbox: Sandbox | undefined;
let services: BotServices | undefined;
afterEach(() => {
  services?.dispose();
  return sandbox?.stop();
});

/**
 * The helpers of a dead letter's replay (its signal given the background lane), on a client
 * allowed one call a minute, whose registration spent the minute.
 */
async function replayHelpers() {
  const { clock, sandbox: box, client } = await oneCallAMinute(BOT);
  sandbox = box;
  // The registration spends the minute.
  const register = await client.events.register({ event_types: ["typing"], fetch_event_types: ["realm"] });
  const server = serverInfoFrom(register);
  const selfId = register.user_id!;
  services = new BotServices({
    name: "typist",
    client,
    store: new MemoryStore(),
    log: pino({ level: "silent" }),
    receives: () => true,
    clock,
  });
  services.onRegistered(server, { userId: selfId });
  const helpers = services.forContext({
    signal: callLaneOf(new AbortController().signal, "background"),
    server,
    selfId,
    send: async () => ({ id: 0 }),
  });
  const memberId = box.control.users().find((u) => u.email === MEMBER)!.user_id;
  return { clock, box, client, helpers, memberId };
}

it("a replay's typing notices wait in the background lane: a live reply asked after each starts first", async () => {
  const { clock, box, client, helpers, memberId } = await replayHelpers();
  const live = (content: string) => client.messages.send({ type: "direct", to: [memberId], content });
  const calls = () =>
    box.control.requests
      .filter((r) => r.email === BOT && r.status === 200)
      .map((r) => `${r.method} ${r.path}`);
  const minute = async () => {
    await clock.tick(60_000);
    await flushAsync();
  };

  let finish = () => {};
  const working = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const typing = helpers.typing.during({ users: [memberId] }, () => working);
  await flushAsync();
  const first = live("live 1");
  await flushAsync();
  await minute();
  await minute();
  await box.control.waitFor(() => calls().includes("POST /typing"));
  // The work is done: the stop waits for the budget, and a live reply asked after it.
  finish();
  await flushAsync();
  const second = live("live 2");
  await flushAsync();
  await minute();
  await minute();
  await Promise.all([typing, first, second]);
  expect(calls()).toEqual([
    "POST /register",
    "POST /messages",
    "POST /typing",
    "POST /messages",
    "POST /typing",
  ]);
});

it("a replay's call made with the signal during() gives its work waits in the background lane: a live reply asked after it starts first", async () => {
  const { clock, box, client, helpers, memberId } = await replayHelpers();
  const send = (content: string, signal?: AbortSignal) =>
    client.messages.send({ type: "direct", to: [memberId], content }, signal ? { signal } : {});
  const minute = async () => {
    await clock.tick(60_000);
    await flushAsync();
  };

  // The work sends a message with the signal it is given, as a replay's run would with ctx.api.
  const typing = helpers.typing.during({ users: [memberId] }, (signal) => send("from the replay", signal));
  await flushAsync();
  const live = send("live");
  await flushAsync();
  for (let i = 0; i < 4; i++) await minute();
  await Promise.all([typing, live]);
  const sent = box.control
    .messages()
    .filter((m) => m.content === "live" || m.content === "from the replay")
    .map((m) => m.content);
  expect(sent).toEqual(["live", "from the replay"]);
  expect(
    box.control.requests
      .filter((r) => r.email === BOT && r.status === 200)
      .map((r) => `${r.method} ${r.path}`),
  ).toEqual(["POST /register", "POST /messages", "POST /typing", "POST /messages", "POST /typing"]);
});
