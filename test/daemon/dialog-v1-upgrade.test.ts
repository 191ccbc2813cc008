/**
 * A dialog waiting across the upgrade from the version before logs (one record per dialog, under
 * its first message's id): the first start reads the record, writes it again as a header and a log,
 * and the dialog goes on at the question it waits at. The records written here have the shape that
 * version wrote (taken from its `bothost run` waiting at the guide's order bot's second question),
 * with the ids of this sandbox's messages. A header the first versions with logs made of such a
 * record (its `v` the record's) is read too, and so is the record a dead letter of that version carries
 * (a dialog's failed run). A real daemon in this process against the sandbox over HTTP, restarted on
 * the same store.
 */
import { afterEach, expect, it } from "vitest";
import { z } from "zod";
import { defineBot } from "../../src/bot/define-bot.ts";
import { dialogDesk } from "../../src/daemon/dialog-desk.ts";
import { PromptError } from "../../src/pipeline/dialogs/prompt-error.ts";
import { FileStore } from "../../src/state/file-store.ts";
import type { JsonValue } from "../../src/state/state-store.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { StoreGate } from "../support/gated-store.ts";
import { saidAtLeast } from "../support/self-killing-bot.ts";

const BOT = "order-bot@sandbox.example";
const MEMBER = "member@sandbox.example";
const NOTE = "An operator ended this conversation.";

const orders = defineBot({
  setup(bot) {
    bot.command("order", async (ctx) => {
      try {
        const size = await ctx.prompt("Which size: small or large?", {
          schema: z.enum(["small", "large"]),
          timeout: "10m",
        });
        const count = await ctx.prompt("How many?", { schema: z.coerce.number().int().min(1).max(9) });
        await ctx.reply(`${count.value} × ${size.value} coming up.`);
      } catch (err) {
        if (!(err instanceof PromptError && err.code === "PROMPT_TIMEOUT")) throw err;
        await ctx.reply("No answer, so no coffee for now. Ask again any time.");
      }
    });
    bot.on("message", (ctx) => ctx.reply(`not a command: ${ctx.text}`));
  },
});

let up: GatedDaemon | undefined;
afterEach(() => closeGatedDaemon(up));

/** The direct message `id` as that version kept it in a record (its fields as the event gave them). */
function kept(up: GatedDaemon, id: number, sender: { user_id: number; full_name: string; email: string }) {
  const m = up.sandbox.control.messageView(id)!;
  return {
    id,
    sender_id: sender.user_id,
    content: String(m.content),
    recipient_id: sender.user_id,
    timestamp: Number(m.timestamp),
    client: "curl",
    subject: "",
    topic_links: [],
    is_me_message: false,
    reactions: [],
    submessages: [],
    sender_full_name: sender.full_name,
    sender_email: sender.email,
    sender_realm_str: "sandbox",
    display_recipient: m.display_recipient,
    type: "private",
    avatar_url: null,
    content_type: "text/x-markdown",
  };
}

/** The messages of an older version's dialog, posted while no daemon runs: their ids. */
type Posted = Record<string, number>;

/**
 * The daemon stopped; meanwhile `post` sends the conversation's messages, and `record` (given
 * their ids, the two people, and the time) is kept as the older version kept it, with its
 * effects' records; then the daemon starts again on that state.
 */
async function upgradeWith(
  post: (dm: (content: string) => number, botSays: (content: string) => number) => Posted,
  record: (ids: Posted, people: { member: Person; bot: Person }, now: number) => V1Record,
  gate?: StoreGate,
): Promise<void> {
  const { control } = up!.sandbox;
  const user = (email: string) => control.users().find((u) => u.email === email)!;
  const people = { member: user(MEMBER), bot: user(BOT) };
  const botSays = (content: string) => control.sendAs(BOT, { type: "direct", to: [MEMBER], content }).id;
  await up!.restart(async () => {
    const ids = post((content) => up!.dm(content), botSays);
    const kept = record(ids, people, up!.clock.now());
    const store = await FileStore.open(up!.dir, { now: () => up!.clock.now() });
    const mine = store.namespace("orders");
    await mine.namespace("dialogs").set(kept.id, kept as unknown as JsonValue);
    const origin = kept.origin.message.id;
    for (const fx of kept.effects)
      await mine.namespace("effects").set(`m:${origin}#${fx.n}`, fx, { ttlMs: 6 * 3_600_000 });
    await store.close();
    // The start's first write of a dialog (the rewrite) lands, and its reply is lost.
    if (gate) gate.mode = "lose";
  });
}

type Person = { user_id: number; full_name: string; email: string };

interface V1Record {
  v: 1;
  id: string;
  origin: { message: { id: number } };
  effects: { n: number; kind: string; result: JsonValue }[];
  [field: string]: unknown;
}

/** The fields the older version kept of a dialog with `member` in direct messages. */
function v1Dialog(member: Person, bot: Person, now: number) {
  return {
    v: 1 as const,
    userId: member.user_id,
    userName: member.full_name,
    conversation: `dm:${Math.min(member.user_id, bot.user_id)},${Math.max(member.user_id, bot.user_id)}`,
    where: "direct message",
    startedAt: now - 2_000,
    waiting: true,
    values: [],
  };
}

/** The guide's order bot, upgraded with a dialog the older version kept waiting at "How many?". */
/**
 * `then`: the second question answered with "2" (`answered`) or past its deadline (`timedOut`),
 * recorded by the older version before it stopped, and not yet run.
 */
async function orderWaiting(gate?: StoreGate, then?: "answered" | "timedOut"): Promise<GatedDaemon> {
  const started = await startGatedDaemon({
    ...(gate && { gate }),
    name: "orders",
    email: BOT,
    fullName: "Orders",
    definition: orders,
  });
  up = started;
  await upgradeWith(
    // "wait", typed while the bot was working, came before the question it would answer (with
    // `then`, the older version handled it before it recorded what followed: it is not sent here).
    (dm, botSays) => ({
      order: dm("order"),
      q1: botSays("Which size: small or large?"),
      large: dm("large"),
      ...(then === undefined && { wait: dm("wait") }),
      q2: botSays("How many?"),
      ...(then === "answered" && { two: dm("2") }),
    }),
    (ids, { member, bot }, now) => ({
      ...v1Dialog(member, bot, now),
      id: String(ids.order),
      origin: { type: "message", message: kept(up!, ids.order!, member), flags: [], id: 0 },
      steps: [
        {
          question: "Which size: small or large?",
          askedAt: now - 2_000,
          deadline: now + 598_000,
          answers: [kept(up!, ids.large!, member)],
        },
        {
          question: "How many?",
          askedAt: now - 1_000,
          deadline: now + 599_000,
          answers: then === "answered" ? [kept(up!, ids.two!, member)] : [],
          ...(then === "timedOut" && { timedOut: true }),
        },
      ],
      ...(then !== undefined && { waiting: false }),
      effects: [
        { n: 1, kind: "send", result: { id: ids.q1! } },
        { n: 2, kind: "send", result: { id: ids.q2! } },
      ],
    }),
    gate,
  );
  return started;
}

it("a dialog the version before logs kept goes on at its question, once, after the upgrade", async () => {
  const at = await orderWaiting();
  const daemon = at.running.daemon.bots[0]!;
  await expect
    .poll(() => daemon.dialogs().map((d) => [d.step, d.deadline !== undefined]))
    .toEqual([[2, true]]);
  at.dm("2");
  // The origin and the first answer, caught up again, are known as handled; "wait" is ordinary.
  expect(await saidAtLeast(at.sandbox, BOT, 4)).toEqual([
    "Which size: small or large?",
    "How many?",
    "not a command: wait",
    "2 × large coming up.",
  ]);
  await expect.poll(() => daemon.dialogs()).toEqual([]);
});

it("a dialog the bot started in the older version gets an id every operator's route takes", async () => {
  up = await startGatedDaemon({ name: "orders", email: BOT, fullName: "Orders", definition: orders });
  // Its first message was no server message: its id, negative, was the dialog's.
  const started = -(0x3e8 + 1);
  await upgradeWith(
    (_dm, botSays) => ({ q1: botSays("Which size: small or large?") }),
    (ids, { member, bot }, now) => {
      const dialog = v1Dialog(member, bot, now);
      const origin = {
        id: started,
        type: "private",
        sender_id: member.user_id,
        sender_email: member.email,
        sender_full_name: member.full_name,
        content: "order",
        display_recipient: [
          { id: member.user_id, email: member.email, full_name: member.full_name },
          { id: bot.user_id, email: bot.email, full_name: bot.full_name },
        ],
        subject: "",
        recipient_id: 0,
        timestamp: Math.floor(dialog.startedAt / 1000),
        client: "bothost",
        content_type: "text/x-markdown",
      };
      return {
        ...dialog,
        id: String(started),
        origin: { id: -1, type: "message", flags: ["read"], message: origin },
        steps: [
          {
            question: "Which size: small or large?",
            askedAt: now - 1_000,
            deadline: now + 599_000,
            answers: [],
          },
        ],
        effects: [{ n: 1, kind: "send", result: { id: ids.q1! } }],
      };
    },
  );
  const daemon = up.running.daemon.bots[0]!;
  await expect.poll(() => daemon.dialogs().map((d) => [d.id, d.step])).toEqual([["s0000000003e8", 1]]);
  await dialogDesk(up.running.daemon.bots).endDialog("orders", "s0000000003e8", NOTE);
  expect(await saidAtLeast(up.sandbox, BOT, 2)).toEqual(["Which size: small or large?", NOTE]);
  expect(daemon.dialogs()).toEqual([]);
  up.dm("small");
  expect(await saidAtLeast(up.sandbox, BOT, 3)).toEqual([
    "Which size: small or large?",
    NOTE,
    "not a command: small",
  ]);
});

it.each([
  ["waits for its answer", false, "2 × large coming up."],
  [
    "runs its timeout branch once its deadline passed",
    true,
    "No answer, so no coffee for now. Ask again any time.",
  ],
])(
  "a header the first versions with logs wrote for such a dialog (its `v` the record's) is read: it %s",
  async (_, passed, last) => {
    const at = await orderWaiting();
    await expect.poll(() => at.running.daemon.bots[0]!.dialogs()).toHaveLength(1);
    const [dialog] = at.running.daemon.bots[0]!.dialogs();
    await at.restart(async () => {
      const store = await FileStore.open(at.dir, { now: () => at.clock.now() });
      const key = `h:${dialog!.id}`;
      const dialogs = store.namespace("orders").namespace("dialogs");
      await dialogs.set(key, { ...((await dialogs.get(key)) as object), v: 1 } as JsonValue);
      await store.close();
      // Down past the question's deadline (the record's: 10 minutes from its asking).
      if (passed) await at.clock.advance(700_000);
    });
    const daemon = at.running.daemon.bots[0]!;
    if (!passed) {
      await expect.poll(() => daemon.dialogs().map((d) => d.step)).toEqual([2]);
      at.dm("2");
    }
    expect((await saidAtLeast(at.sandbox, BOT, 4)).at(-1)).toBe(last);
    await expect.poll(() => daemon.dialogs()).toEqual([]);
  },
);

it("a rewrite that landed with its reply lost leaves no record behind: the ended dialog stays ended", async () => {
  const gate = new StoreGate();
  const at = await orderWaiting(gate);
  const daemon = at.running.daemon.bots[0]!;
  await expect.poll(() => daemon.dialogs().map((d) => d.step)).toEqual([2]);
  expect(gate.stopped).toBe(1);
  at.dm("2");
  expect((await saidAtLeast(at.sandbox, BOT, 4)).at(-1)).toBe("2 × large coming up.");
  // Down past the time an ended dialog's header is kept (7 days).
  await at.restart(() => at.clock.advance(8 * 86_400_000));
  expect(at.running.daemon.bots[0]!.dialogs()).toEqual([]);
  at.dm("3");
  expect((await saidAtLeast(at.sandbox, BOT, 5)).at(-1)).toBe("not a command: 3");
});

it.each([
  ["answered", "2 × large coming up."],
  ["timedOut", "No answer, so no coffee for now. Ask again any time."],
] as const)(
  "a dialog the older version recorded as %s, not yet run, runs at the first start",
  async (then, last) => {
    const at = await orderWaiting(undefined, then);
    // The answer, caught up again, is known as recorded: only the run says something.
    await expect.poll(() => at.running.daemon.bots[0]!.dialogs()).toEqual([]);
    expect(await saidAtLeast(at.sandbox, BOT, 3)).toEqual(["Which size: small or large?", "How many?", last]);
    at.dm("3");
    const after = ["Which size: small or large?", "How many?", last, "not a command: 3"];
    expect(await saidAtLeast(at.sandbox, BOT, 4)).toEqual(after);
  },
);

it("a dialog's dead letter the older version kept goes on from its recorded answer when retried", async () => {
  up = await startGatedDaemon({ name: "orders", email: BOT, fullName: "Orders", definition: orders });
  const { control } = up.sandbox;
  const user = (email: string) => control.users().find((u) => u.email === email)!;
  const [member, bot] = [user(MEMBER), user(BOT)];
  await up.restart(async () => {
    const asked = control.sendAs(BOT, {
      type: "direct",
      to: [MEMBER],
      content: "Which size: small or large?",
    }).id;
    const [order, large] = [up!.dm("order"), up!.dm("large")];
    const now = up!.clock.now();
    // Its run failed every attempt after the first answer: the letter carries the dialog's record.
    const effects = [{ n: 1, kind: "send", result: { id: asked } }];
    const event = { type: "message", message: kept(up!, order, member), flags: [], id: 11 };
    const failed = new Date(now).toISOString();
    const letter = {
      source: "queue",
      event,
      error: { name: "Error", message: "the store is out of reach" },
      attempts: 5,
      firstFailedAt: failed,
      lastFailedAt: failed,
      effects,
      dialog: {
        ...v1Dialog(member, bot, now),
        id: String(order),
        origin: event,
        steps: [
          {
            question: "Which size: small or large?",
            askedAt: now - 2_000,
            deadline: now + 598_000,
            answers: [kept(up!, large, member)],
          },
        ],
        waiting: false,
        effects,
      },
      id: "orders/1",
      bot: "orders",
    };
    const store = await FileStore.open(up!.dir, { now: () => up!.clock.now() });
    const mine = store.namespace("orders");
    // That version handled both messages: its cursor is past them.
    await mine.namespace("runtime").set("cursor", large);
    await mine.namespace("effects").set(`m:${order}#1`, effects[0]!, { ttlMs: 6 * 3_600_000 });
    await mine.namespace("dead-letters").set("seq", 1);
    await mine.namespace("dead-letters").set("e:000000000001", letter as unknown as JsonValue);
    await store.close();
  });
  await up.running.daemon.letters.retry({ ids: ["orders/1"] });
  expect(await saidAtLeast(up.sandbox, BOT, 2)).toEqual(["Which size: small or large?", "How many?"]);
  // The letter is removed once its run committed, which may come after the question's send.
  await expect.poll(() => up!.running.daemon.letters.list()).toEqual([]);
  up.dm("2");
  expect((await saidAtLeast(up.sandbox, BOT, 3)).at(-1)).toBe("2 × large coming up.");
});
