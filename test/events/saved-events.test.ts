/**
 * What saving the unfinished non-message events costs (src/events/saved-events.ts), counted in
 * the store's writes of the saved set, over the sandbox's HTTP: nothing for batches of messages
 * only; one write per batch holding a reaction, and one for the removals once its run is over;
 * and past the cap, a warning, the events then handled unsaved.
 */
import { afterEach, expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import { SAVED_EVENTS_CAP, SAVED_EVENTS_KEY } from "../../src/events/saved-events.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";
import type { StateBackend, StateStore } from "../../src/state/state-store.ts";
import { type InProcessDaemon, startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { reactAs } from "../../src/testing/react-as.ts";
import { fixtureFor } from "../support/sandbox/fixture.ts";

const BOT = "bot@sandbox.example";
const MEMBER = "member@sandbox.example";

let sandbox: Sandbox | undefined;
let daemon: InProcessDaemon | undefined;
afterEach(async () => {
  await daemon?.stop({ deadlineMs: 0 });
  await sandbox?.stop();
  daemon = undefined;
  sandbox = undefined;
});

/** `backend`, counting the writes (`set`, `delete`) of the saved set of bot `bot`. */
function counted(backend: StateBackend, bot: string) {
  const writes: string[] = [];
  const values: unknown[] = [];
  const wrap = (inner: StateStore, at: readonly string[]): StateStore =>
    new Proxy(inner, {
      get(target, prop, receiver) {
        if (prop === "namespace") return (name: string) => wrap(target.namespace(name), [...at, name]);
        const runtime = at.length === 2 && at[0] === bot && at[1] === "runtime";
        if (runtime && (prop === "set" || prop === "delete")) {
          return (key: string, ...rest: unknown[]) => {
            if (key === SAVED_EVENTS_KEY) {
              writes.push(prop);
              if (prop === "set") values.push(rest[0]);
            }
            return (target[prop] as (...a: unknown[]) => unknown).call(target, key, ...rest);
          };
        }
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  return { store: wrap(backend, []) as StateBackend, writes, values };
}

it("a batch of messages only, or a typing notice, writes nothing to the saved set; a batch with a reaction, one write, and one for its removal", async () => {
  sandbox = await startSandbox({ heartbeatSeconds: 1 });
  const handled: string[] = [];
  const definition = {
    setup(bot: BotApi) {
      bot.on("message", (ctx) => {
        handled.push(`message ${ctx.event.message.id}`);
      });
      // Its run outlives the batch's dispatch (a reply): the batch is saved before the next poll.
      bot.on("typing", async (ctx) => {
        await ctx.send({ type: "direct", to: [ctx.event.sender.user_id], content: "typing seen" });
        handled.push(`typing ${ctx.event.op}`);
      });
      bot.on("reaction", async (ctx) => {
        await ctx.send({ type: "direct", to: [ctx.event.user_id], content: "noted" });
        handled.push(`reaction ${ctx.event.op}`);
      });
    },
  } as BotDefinition;
  const { store, writes, values } = counted(new MemoryStore(), "b");
  daemon = await startInProcessDaemon(sandbox, { b: { email: BOT, definition } }, { store });
  const { control } = sandbox;
  // A burst while no poll is parked: the messages come in batches of several.
  control.delay(60_000, { paths: ["/events"] });
  const ids = Array.from(
    { length: 30 },
    (_, i) => control.sendAs(MEMBER, { type: "direct", to: [BOT], content: `m${i}` }).id,
  );
  control.delay(0);
  await expect.poll(() => handled.length).toBe(ids.length);
  expect(writes).toEqual([]);

  // Typing is about a moment: not kept (a run again after a restart would say what is no longer true).
  const member = fixtureFor(sandbox).as(MEMBER);
  await member.post("/typing", { op: "start", to: [control.users().find((u) => u.email === BOT)!.user_id] });
  await expect.poll(() => handled.includes("typing start")).toBe(true);
  expect(writes).toEqual([]);

  const before = Date.now();
  await reactAs(sandbox, MEMBER, ids[0]!, "tada", false);
  await expect.poll(() => handled.includes("reaction add")).toBe(true);
  // The removal is written after the turn the run ended in.
  await expect.poll(() => writes.length).toBe(2);
  expect(writes).toEqual(["set", "delete"]);
  // Kept with when it was kept: a run again after a kill bounds its read-backs from then.
  const [entry] = values[0] as { at: number; event: { type: string } }[];
  expect(entry?.event.type).toBe("reaction");
  expect(entry?.at).toBeGreaterThanOrEqual(before);
  expect(entry?.at).toBeLessThanOrEqual(Date.now());
});

it(`past ${SAVED_EVENTS_CAP} unfinished events, one warning names the bot, and the next events are handled unsaved`, async () => {
  sandbox = await startSandbox({ heartbeatSeconds: 1 });
  let open = () => {};
  const gate = new Promise<void>((go) => {
    open = go;
  });
  let handled = 0;
  const definition = {
    setup(bot: BotApi) {
      bot.on("reaction", async () => {
        await gate;
        handled++;
      });
    },
  } as BotDefinition;
  const backend = new MemoryStore();
  daemon = await startInProcessDaemon(sandbox, { b: { email: BOT, definition } }, { store: backend });
  const { control } = sandbox;
  const id = control.sendAs(MEMBER, { type: "direct", to: [BOT], content: "react" }).id;
  // Added and removed in turn: each is a reaction event, all in the message's conversation, each
  // waiting behind the first, held at the gate.
  const events = SAVED_EVENTS_CAP + 10;
  for (let i = 0; i < events; i++) await reactAs(sandbox, MEMBER, id, "tada", i % 2 === 1);
  const full = () => daemon!.logged("events wait unfinished");
  const saved = () => backend.namespace("b").namespace("runtime").get(SAVED_EVENTS_KEY);
  await expect.poll(() => full().length).toBe(1);
  await expect.poll(async () => ((await saved()) as unknown[] | undefined)?.length).toBe(SAVED_EVENTS_CAP);
  expect(full()).toHaveLength(1);
  expect(full()[0]).toMatchObject({ level: 40, bot: "b", cap: SAVED_EVENTS_CAP });
  open();
  await expect.poll(() => handled).toBe(events);
  await expect.poll(saved).toBeUndefined();
});

it("an event of a type only the bot's waiting dialogs asked for (an edit, while a question waits in a topic) is not saved", async () => {
  sandbox = await startSandbox({ heartbeatSeconds: 1 });
  const held: string[] = [];
  let open = () => {};
  const gate = new Promise<void>((go) => {
    open = go;
  });
  const definition = {
    setup(bot: BotApi) {
      // A middleware sees every event the queue delivers; this one holds an edit unfinished.
      bot.use(async (ctx, next) => {
        if (ctx.event.type === "update_message") {
          held.push(ctx.event.type);
          await gate;
        }
        return next();
      });
      bot.on("message", async (ctx) => {
        if (ctx.event.message.content.endsWith("ask")) await ctx.prompt("Which?");
      });
      bot.on("reaction", async (ctx) => {
        await ctx.send({ type: "direct", to: [ctx.event.user_id], content: "noted" });
      });
    },
  } as BotDefinition;
  const { store, values } = counted(new MemoryStore(), "b");
  daemon = await startInProcessDaemon(sandbox, { b: { email: BOT, definition } }, { store });
  const { control } = sandbox;
  control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "@**bot** ask" });
  // The question waiting in a topic has the queue receive message moves (its dialog follows them).
  await expect.poll(() => control.queues().some((q) => q.event_types?.includes("update_message"))).toBe(true);
  const other = control.sendAs(MEMBER, { type: "stream", to: "general", topic: "u", content: "typo" });
  const edited = await fixtureFor(sandbox).as(MEMBER).patch(`/messages/${other.id}`, { content: "fixed" });
  expect(edited.status).toBe(200);
  await expect.poll(() => held).toEqual(["update_message"]);
  // A reaction, which the bot's code asked for, is saved: the set written holds it and not the
  // edit, still unfinished.
  await reactAs(sandbox, MEMBER, other.id, "tada", false);
  await expect.poll(() => values.length).toBeGreaterThan(0);
  expect((values[0] as { event: { type: string } }[]).map((e) => e.event.type)).toEqual(["reaction"]);
  open();
});
