/**
 * Outgoing-webhook bots end to end: the sandbox POSTs real payloads to bothost's listener, which
 * runs the bot's ordinary `message` handlers and answers in time.
 */
import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { deferred } from "../support/deferred.ts";
import { freePort, type RunningDaemon, startDaemon } from "../support/http-daemon.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { HELPER, MEL, outgoingOrg, TOKEN } from "../support/outgoing-org.ts";

let sandbox: Sandbox | undefined;
let running: RunningDaemon | undefined;

afterEach(async () => {
  await running?.stop();
  await sandbox?.stop();
  running = undefined;
  sandbox = undefined;
});

function bot(setup: (bot: BotApi) => void): BotDefinition<never, never> {
  return { setup } as unknown as BotDefinition<never, never>;
}

/** A sandbox whose outgoing-webhook bot points at bothost (on a port chosen up front). */
async function setup(
  definition: BotDefinition<never, never>,
  options: { iface?: "zulip" | "slack"; deadline?: string; clock?: ManualClock; extra?: string } = {},
) {
  const port = await freePort();
  sandbox = await startSandbox({ org: outgoingOrg(port, options.iface) });
  running = await startDaemon(
    sandbox,
    {
      helper: {
        email: HELPER,
        definition,
        extra: `outgoing_webhook:\n  path: /hooks/helper\n  token: \${HELPER_TOKEN}\n  reply_deadline: ${options.deadline ?? "8s"}${options.extra ? `\n${options.extra}` : ""}`,
      },
    },
    { port, env: { HELPER_TOKEN: TOKEN }, ...(options.clock ? { clock: options.clock } : {}) },
  );
  return { sandbox, running };
}

const mention = (sb: Sandbox, content: string, topic = "ping") =>
  sb.control.sendAs(MEL, { type: "stream", to: "general", topic, content }).id;

function lastMessage(sb: Sandbox) {
  return sb.control.messages().at(-1)!;
}

/** A real message object as the server would put it in a payload (fetched through the API). */
async function payloadFor(sb: Sandbox, id: number, token = TOKEN) {
  const key = sb.control.apiKeyOf(HELPER);
  const res = await request(`${sb.url}/api/v1/messages/${id}?apply_markdown=false`, {
    headers: { authorization: `Basic ${Buffer.from(`${HELPER}:${key}`).toString("base64")}` },
  });
  const { message } = (await res.body.json()) as { message: Record<string, unknown> };
  return {
    data: message.content,
    message,
    bot_email: HELPER,
    bot_full_name: "Helper",
    token,
    trigger: "mention",
  };
}

async function post(url: string, body: unknown) {
  const res = await request(url, {
    method: "POST",
    headers: { "content-type": "application/json", "user-agent": "ZulipOutgoingWebhook/test" },
    body: JSON.stringify(body),
  });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

/** Polls `read` until it equals `expected`, moving the test clock by `stepMs` before each reading. */
function pollTicking<T>(clock: ManualClock, stepMs: number, read: () => T, expected: T) {
  return expect
    .poll(
      async () => {
        await clock.tick(stepMs);
        return read();
      },
      { timeout: 10_000 },
    )
    .toEqual(expected);
}

/**
 * A Slack-format bot whose every GET /messages answers 503, mentioned in `topic`: resolves once
 * the delivery was answered (200) and its later lookups are pending on the test clock.
 */
async function everyLookupFailing(topic: string) {
  const clock = new ManualClock(Date.now());
  const seen: number[] = [];
  const { sandbox: sb, running: d } = await setup(
    bot((b) => b.on("message", (ctx) => void seen.push(ctx.event.message.id))),
    { iface: "slack", clock },
  );
  sb.control.failNext(1_000, { status: 503, paths: [/^\/messages$/], methods: ["GET"] });
  const id = mention(sb, "@**Helper** hi", topic);
  const answered = () => d.logs.filter((l) => l.route === "/hooks/helper").map((l) => l.status);
  // The client's own retries of the read wait on the test clock.
  await pollTicking(clock, 500, answered, [200]);
  return { clock, seen, sb, d, id };
}

describe("outgoing-webhook bots", () => {
  it("a mention reaches the bot's message handler; its reply goes back in the response", async () => {
    const seen: { content: string; flags: string[]; replayed: boolean }[] = [];
    const sent: { id: number }[] = [];
    const { sandbox: sb } = await setup(
      bot((b) =>
        b.on("message", { mentioned: true }, async (ctx) => {
          seen.push({ content: ctx.event.message.content, flags: ctx.event.flags, replayed: ctx.replayed });
          sent.push(
            await ctx.reply(`pong from ${ctx.bot.name} (${ctx.bot.userId > 0 ? "known id" : "no id"})`),
          );
        }),
      ),
    );
    mention(sb, "@**Helper** ping");
    await sb.control.settleWebhooks();
    expect(seen).toEqual([{ content: "@**Helper** ping", flags: ["mentioned"], replayed: false }]);
    // The server posts the reply after our answer, so its id is not known to the handler.
    await expect.poll(() => sent).toEqual([{ id: -1 }]);
    expect(lastMessage(sb)).toMatchObject({
      content: "pong from helper (known id)",
      topic: "ping",
      client: "OutgoingWebhookResponse",
    });
  });

  it("a dialog in direct messages asks each question once, its first reply in the response", async () => {
    const { sandbox: sb } = await setup(
      bot((b) =>
        b.command("order", async (ctx) => {
          await ctx.reply("Let's order.");
          const size = await ctx.prompt("Which size?");
          const count = await ctx.prompt("How many?");
          await ctx.reply(`${count.text} × ${size.text}`);
        }),
      ),
    );
    const helperId = sb.control.users().find((u) => u.email === HELPER)!.user_id;
    const say = (content: string) => sb.control.sendAs(MEL, { type: "direct", to: [helperId], content });
    /** What the bot said, once it said `n` things (a question sent twice shows in order). */
    const said = async (n: number) => {
      await sb.control.settleWebhooks();
      await expect
        .poll(() => sb.control.messages().filter((m) => m.sender_id === helperId).length)
        .toBeGreaterThanOrEqual(n);
      return sb.control
        .messages()
        .filter((m) => m.sender_id === helperId)
        .map((m) => m.content);
    };
    say("order");
    expect(await said(2)).toEqual(["Let's order.", "Which size?"]);
    say("large");
    expect(await said(3)).toEqual(["Let's order.", "Which size?", "How many?"]);
    say("2");
    expect(await said(4)).toEqual(["Let's order.", "Which size?", "How many?", "2 × large"]);
  });

  it("a delivery that answers a dialog is answered once the answer is recorded, not after the dialog's run", async () => {
    const held = deferred();
    const { sandbox: sb } = await setup(
      bot((b) =>
        b.command("order", async (ctx) => {
          const size = await ctx.prompt("Which size?");
          await ctx.reply(`One ${size.text}.`);
          await held.promise;
        }),
      ),
      { clock: new ManualClock() },
    );
    const helperId = sb.control.users().find((u) => u.email === HELPER)!.user_id;
    const said = () =>
      sb.control
        .messages()
        .filter((m) => m.sender_id === helperId)
        .map((m) => m.content);
    sb.control.sendAs(MEL, { type: "direct", to: [helperId], content: "order" });
    await sb.control.settleWebhooks();
    await expect.poll(said).toEqual(["Which size?"]);
    sb.control.sendAs(MEL, { type: "direct", to: [helperId], content: "large" });
    let answered = false;
    void sb.control.settleWebhooks().then(() => {
      answered = true;
    });
    // The run still goes on (held; the clock never reaches the reply deadline), and the server
    // has its answer: a kill now could not show the person "Failure! Bot is unavailable".
    await expect.poll(() => answered).toBe(true);
    await expect.poll(said).toEqual(["Which size?", "One large."]);
    held.resolve();
    await expect.poll(() => running!.daemon.bots[0]!.dialogs()).toEqual([]);
    expect(said()).toEqual(["Which size?", "One large."]);
  });

  it("a dialog's run that fails for good after an answer by webhook is kept with source webhook", async () => {
    const { sandbox: sb, running: d } = await setup(
      bot((b) =>
        b.command("order", async (ctx) => {
          const size = await ctx.prompt("Which size?");
          throw new Error(`no ${size.text} left`);
        }),
      ),
      { extra: "retries: { attempts: 1 }" },
    );
    const helperId = sb.control.users().find((u) => u.email === HELPER)!.user_id;
    const say = (content: string) => sb.control.sendAs(MEL, { type: "direct", to: [helperId], content });
    say("order");
    await sb.control.settleWebhooks();
    await expect
      .poll(() =>
        sb.control
          .messages()
          .filter((m) => m.sender_id === helperId)
          .map((m) => m.content),
      )
      .toEqual(["Which size?"]);
    say("large");
    await sb.control.settleWebhooks();
    // Before, a dialog's run was always kept as `catch-up`, whatever brought its answer.
    await expect
      .poll(async () => (await d.daemon.letters.list()).map((l) => l.source), { timeout: 15_000 })
      .toEqual(["webhook"]);
  });

  it("a delivery whose handler failed for good (its message recorded as handled) runs again at an operator's retry of its letter", async () => {
    let broken = true;
    const seen: number[] = [];
    const { sandbox: sb, running: d } = await setup(
      bot((b) =>
        b.on("message", (ctx) => {
          seen.push(ctx.event.message.id);
          if (broken) throw new Error("broken");
        }),
      ),
      { extra: "retries: { attempts: 1 }" },
    );
    const helperId = sb.control.users().find((u) => u.email === HELPER)!.user_id;
    const id = sb.control.sendAs(MEL, { type: "direct", to: [helperId], content: "hello" }).id;
    await sb.control.settleWebhooks();
    const letters = async () => (await d.daemon.letters.list()).map((l) => [l.source, l.attempts]);
    await expect.poll(letters).toEqual([["webhook", 1]]);
    broken = false;
    const [letter] = await d.daemon.letters.list();
    await d.daemon.letters.retry({ ids: [letter!.id] });
    await expect.poll(letters).toEqual([]);
    expect(seen).toEqual([id, id]);
  });

  it("keeps no event queue in webhook mode, and is ready once it knows its identity", async () => {
    const { sandbox: sb, running: d } = await setup(bot((b) => b.on("message", () => {})));
    // It registered once (for its id and the server's limits) and deleted that queue at once.
    expect(sb.control.requests.filter((r) => r.path === "/register")).toHaveLength(1);
    expect(sb.control.requests.filter((r) => r.method === "DELETE" && r.path === "/events")).toHaveLength(1);
    expect(sb.control.requests.some((r) => r.method === "GET" && r.path === "/events")).toBe(false);
    expect(sb.control.queues().filter((q) => q.email === HELPER)).toEqual([]);
    const res = await request(`${d.url}/readyz`);
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toEqual({
      ready: true,
      bots: [{ bot: "helper", state: "webhook", ready: true }],
    });
  });

  it("a direct message triggers the same handler; the reply goes to the conversation", async () => {
    const { sandbox: sb } = await setup(
      bot((b) => b.on("message", { direct: true }, (ctx) => ctx.reply("hello back"))),
    );
    const helperId = sb.control.users().find((u) => u.email === HELPER)!.user_id;
    sb.control.sendAs(MEL, { type: "direct", to: [helperId], content: "hi" });
    await sb.control.settleWebhooks();
    const melId = sb.control.users().find((u) => u.email === MEL)!.user_id;
    expect(lastMessage(sb)).toMatchObject({ content: "hello back", sender_id: helperId });
    expect([...(lastMessage(sb).dm_user_ids as number[])].sort()).toEqual([helperId, melId].sort());
  });

  it("a wrong token gets 401 and runs no handler; the token never reaches the log", async () => {
    let runs = 0;
    const { sandbox: sb, running: d } = await setup(
      bot((b) =>
        b.on("message", () => {
          runs++;
        }),
      ),
    );
    const id = mention(sb, "no mention here");
    const wrong = "W".repeat(32);
    const res = await post(`${d.url}/hooks/helper`, await payloadFor(sb, id, wrong));
    expect(res).toEqual({
      status: 401,
      body: {
        result: "error",
        msg: "Unauthorized: the token does not match this bot's outgoing_webhook token",
      },
    });
    const missing = await post(`${d.url}/hooks/helper`, { ...(await payloadFor(sb, id)), token: undefined });
    expect(missing.status).toBe(401);
    expect(runs).toBe(0);
    expect(d.logText()).not.toContain(wrong);
    expect(d.logText()).not.toContain(TOKEN);
    expect(d.logs.find((l) => l.msg === "http request" && l.status === 401)).toMatchObject({
      method: "POST",
      path: "/hooks/helper",
    });
  });

  it("a delivery the server repeats (while the first runs, and after) is handled once", async () => {
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const { sandbox: sb, running: d } = await setup(
      bot((b) =>
        b.on("message", async (ctx) => {
          runs++;
          await gate;
          await ctx.reply("once");
        }),
      ),
    );
    const id = mention(sb, "not a mention, so the sandbox posts nothing itself");
    const payload = await payloadFor(sb, id);
    const first = post(`${d.url}/hooks/helper`, payload);
    await expect.poll(() => runs).toBe(1);
    const second = post(`${d.url}/hooks/helper`, payload);
    await expect
      .poll(() => d.logs.some((l) => l.msg === "repeated delivery; answering as the first"))
      .toBe(true);
    release();
    expect(await first).toEqual({ status: 200, body: { content: "once" } });
    expect(await second).toEqual({ status: 200, body: { content: "once" } });
    expect(await post(`${d.url}/hooks/helper`, payload)).toEqual({ status: 200, body: { content: "once" } });
    expect(runs).toBe(1);
  });

  it("a slow handler: the server gets response_not_required in time, the reply then comes through the API", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const sent: { id: number }[] = [];
    const { sandbox: sb } = await setup(
      bot((b) =>
        b.on("message", { mentioned: true }, async (ctx) => {
          await gate;
          sent.push(await ctx.reply("sorry, that took a while"));
        }),
      ),
      { deadline: "200ms" },
    );
    mention(sb, "@**Helper** think hard", "slow");
    const before = sb.control.messages().length;
    await sb.control.settleWebhooks(); // the server has its answer: nothing to post
    expect(sb.control.messages()).toHaveLength(before);
    release();
    const reply = await sb.control.waitFor(() =>
      sb.control.messages().find((m) => m.content === "sorry, that took a while"),
    );
    expect(reply.topic).toBe("slow");
    expect(reply.client).not.toBe("OutgoingWebhookResponse");
    await expect.poll(() => sent).toEqual([{ id: reply.id }]);
  });

  it("the Slack-compatible format: the message is looked up, the reply goes back as text", async () => {
    const seen: number[] = [];
    const { sandbox: sb } = await setup(
      bot((b) =>
        b.on("message", (ctx) => {
          seen.push(ctx.event.message.id);
          return ctx.reply(`slack says hi in ${ctx.event.message.subject}`);
        }),
      ),
      { iface: "slack" },
    );
    const id = mention(sb, "@**Helper** hi", "from slack");
    await sb.control.settleWebhooks();
    expect(seen).toEqual([id]);
    expect(lastMessage(sb)).toMatchObject({
      content: "slack says hi in from slack",
      topic: "from slack",
      client: "OutgoingWebhookResponse",
    });
  });

  it("a Slack-format delivery whose bot begins to stop during its lookup waits for it to start again; its reply goes in the response", async () => {
    const clock = new ManualClock(Date.now());
    const seen: number[] = [];
    const { sandbox: sb, running: d } = await setup(
      bot((b) =>
        b.on("message", (ctx) => {
          seen.push(ctx.event.message.id);
          return ctx.reply("back again");
        }),
      ),
      { iface: "slack", clock },
    );
    sb.control.delay(3_600_000, { paths: [/^\/messages$/] });
    const id = mention(sb, "@**Helper** hi", "stopping");
    await sb.control.waitFor(() => sb.control.delayed() === 1);
    const helper = d.daemon.bots[0]!;
    await helper.stop(1_000);
    sb.control.delay(0);
    await expect
      .poll(() => d.logs.filter((l) => l.msg === "outgoing webhook: delivery held until the bot is ready"))
      .toHaveLength(1);
    await helper.start();
    await sb.control.settleWebhooks();
    expect(seen).toEqual([id]);
    expect(d.logs.filter((l) => l.route === "/hooks/helper").map((l) => l.status)).toEqual([200]);
    expect(lastMessage(sb)).toMatchObject({ content: "back again", client: "OutgoingWebhookResponse" });
  });

  it.each([
    ["GET /messages answers 502 on every attempt of the lookup", "failing"],
    ["the reply deadline passes during the lookup", "slow"],
  ] as const)(
    "a Slack-format delivery whose lookup fails (%s) shows no Failure! message: the handler runs once, when a later lookup finds the message",
    async (_name, how) => {
      const clock = new ManualClock(Date.now());
      const seen: number[] = [];
      const { sandbox: sb, running: d } = await setup(
        bot((b) =>
          b.on("message", async (ctx) => {
            seen.push(ctx.event.message.id);
            await ctx.reply(`late hi in ${ctx.event.message.subject}`);
          }),
        ),
        { iface: "slack", clock },
      );
      // The client tries a read 4 times: every one of them fails.
      if (how === "failing")
        sb.control.failNext(4, { status: 502, paths: [/^\/messages$/], methods: ["GET"] });
      else sb.control.delay(3_600_000, { paths: [/^\/messages$/] });
      const id = mention(sb, "@**Helper** hi", "flaky");
      const answered = () => d.logs.filter((l) => l.route === "/hooks/helper").map((l) => l.status);
      if (how === "slow") {
        await sb.control.waitFor(() => sb.control.delayed() === 1);
        await clock.tick(8_000); // the reply deadline (8s), before the server's 10s
        await expect.poll(answered).toEqual([200]);
        sb.control.delay(0);
      }
      await pollTicking(clock, 500, () => seen, [id]);
      await sb.control.settleWebhooks();
      await expect.poll(() => lastMessage(sb).content).toBe("late hi in flaky");
      expect(sb.control.messages().filter((m) => String(m.content).startsWith("Failure!"))).toEqual([]);
      expect(answered()).toEqual([200]);
      expect(seen).toEqual([id]);
      expect(
        d.logs.filter((l) =>
          String(l.msg).startsWith("Slack-format delivery: looking up its message failed"),
        ),
      ).toHaveLength(1);
    },
  );

  it("a Slack-format delivery whose lookups all fail: a repeat starts nothing more, the message is not handled, no Failure! message", async () => {
    const { clock, seen, sb, d, id } = await everyLookupFailing("down");
    await sb.control.settleWebhooks();
    const msg = sb.control.messages().find((m) => m.id === id)!;
    const form = new URLSearchParams({
      token: TOKEN,
      channel_id: `C${msg.stream_id}`,
      user_id: `U${msg.sender_id}`,
      timestamp: String(msg.timestamp),
      text: String(msg.content),
    });
    const repeat = await request(`${d.url}/hooks/helper`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form.toString(),
    });
    expect([repeat.statusCode, await repeat.body.json()]).toEqual([200, { response_not_required: true }]);
    const gaveUp = () =>
      d.logs.filter((l) => String(l.msg).includes("could not be looked up after every retry"));
    await pollTicking(clock, 5_000, () => gaveUp().length, 1);
    expect(seen).toEqual([]);
    expect(sb.control.messages().filter((m) => String(m.content).startsWith("Failure!"))).toEqual([]);
    expect(
      d.logs.filter((l) => String(l.msg).startsWith("Slack-format delivery: looking up its message failed")),
    ).toHaveLength(1);
    expect(d.logs.filter((l) => String(l.msg).startsWith("repeated Slack-format delivery"))).toHaveLength(1);
  });

  it("a Slack-format delivery still being looked up when the daemon stops is logged as not handled", async () => {
    const { seen, d } = await everyLookupFailing("closing");
    await d.stop();
    running = undefined;
    expect(seen).toEqual([]);
    const dropped = d.logs.filter((l) => String(l.msg).includes("not handled"));
    expect(dropped.map((l) => [l.level, l.pending])).toEqual([[40, 1]]);
  });

  it("a Slack-format lookup under way when the daemon stops is cut off by the stop, which does not wait for it; the warning counts it", async () => {
    const { clock, seen, sb, d } = await everyLookupFailing("stopping");
    // The next later lookup is held by the server: it is under way when the daemon stops.
    sb.control.delay(3_600_000, { paths: [/^\/messages$/] });
    await pollTicking(clock, 500, () => sb.control.delayed(), 1);
    await d.stop();
    running = undefined;
    expect(seen).toEqual([]);
    const dropped = d.logs.filter((l) => String(l.msg).includes("not handled"));
    expect(dropped.map((l) => [l.level, l.pending])).toEqual([[40, 1]]);
    // Cut off by the stop itself, not by its 30 s deadline on a clock that no longer moves.
    const cutOff = d.logs.filter((l) => String(l.msg).includes("a later lookup failed"));
    expect(cutOff.map((l) => (l.err as { name?: string }).name)).toEqual(["AbortError"]);
    sb.control.delay(0);
  });

  it("Slack-format deliveries past the cap of pending lookups are not kept: one warning, the kept ones handled once, GET /messages within budget", async () => {
    const clock = new ManualClock(Date.now());
    const seen: number[] = [];
    const { sandbox: sb, running: d } = await setup(
      bot((b) => b.on("message", (ctx) => void seen.push(ctx.event.message.id))),
      { iface: "slack", clock },
    );
    const cap = 5; // the cap docs/guide/webhooks.md states
    const over = cap + 3;
    // Every first lookup is held past the reply deadline (8s): each one fails.
    sb.control.delay(3_600_000, { paths: [/^\/messages$/] });
    const ids = Array.from({ length: over }, (_, i) => mention(sb, `@**Helper** hi ${i}`, `busy ${i}`));
    await sb.control.waitFor(() => sb.control.delayed() === over);
    await clock.tick(8_000);
    const answered = () => d.logs.filter((l) => l.route === "/hooks/helper").map((l) => l.status);
    await expect.poll(answered).toEqual(Array(over).fill(200));
    sb.control.delay(0);
    const capped = () => d.logs.filter((l) => String(l.msg).includes("too many are looked up again"));
    expect(capped().map((l) => [l.level, l.max])).toEqual([[40, cap]]);
    // The kept ones' first later lookups: 1 s each, lengthened by up to half at random, not all at once.
    const pauses = clock.pendingDelays().filter((ms) => ms >= 1_000 && ms <= 1_500);
    expect(pauses).toHaveLength(cap);
    expect(new Set(pauses).size).toBeGreaterThan(1);
    await pollTicking(clock, 1_000, () => seen.length, cap);
    await clock.tick(600_000);
    expect(seen).toHaveLength(cap);
    expect(new Set(seen).size).toBe(cap);
    expect(seen.every((id) => ids.includes(id))).toBe(true);
    // At most one first lookup each, and one later lookup per delivery kept: none for the others.
    const reads = sb.control.requests.filter((r) => r.method === "GET" && r.path === "/messages");
    expect(reads.length).toBeGreaterThanOrEqual(cap);
    expect(reads.length).toBeLessThanOrEqual(over + cap);
    expect(sb.control.messages().filter((m) => String(m.content).startsWith("Failure!"))).toEqual([]);
  });

  it("a Slack-format delivery looked up again while a reload restarts its bot is handled once the bot is back", async () => {
    const clock = new ManualClock(Date.now());
    const seen: number[] = [];
    const definition = bot((b) =>
      b.on("message", async (ctx) => {
        seen.push(ctx.event.message.id);
        await ctx.reply("back");
      }),
    );
    const { sandbox: sb, running: d } = await setup(definition, { iface: "slack", clock });
    // The first lookup fails on each of the client's 4 attempts: later lookups are pending.
    sb.control.failNext(4, { status: 502, paths: [/^\/messages$/], methods: ["GET"] });
    const id = mention(sb, "@**Helper** hi", "reloading");
    const answered = () => d.logs.filter((l) => l.route === "/hooks/helper").map((l) => l.status);
    await pollTicking(clock, 100, answered, [200]);
    // A reload restarts the bot; its new version's registration is held: it is not ready yet.
    sb.control.delay(3_600_000, { paths: [/^\/register$/] });
    const plan = { add: [], remove: [], restart: ["helper"], keep: [], needRestart: [] };
    const reloading = d.daemon.applyReload(d.daemon.config, plan, [
      { name: "helper", definition, settings: {} },
    ]);
    await sb.control.waitFor(() => sb.control.delayed() === 1);
    await clock.tick(1_000); // the first later lookup comes while the bot restarts
    sb.control.delay(0);
    await reloading;
    await pollTicking(clock, 1_000, () => seen, [id]);
    await sb.control.settleWebhooks();
    await expect.poll(() => lastMessage(sb).content).toBe("back");
  });

  it("a Slack-format delivery is answered within its reply deadline counted from its arrival, the lookup's time included", async () => {
    const clock = new ManualClock(Date.now());
    const gate = deferred();
    let started = false;
    const sent: { id: number }[] = [];
    const { sandbox: sb, running: d } = await setup(
      bot((b) =>
        b.on("message", async (ctx) => {
          started = true;
          await gate.promise;
          sent.push(await ctx.reply("slow hi"));
        }),
      ),
      { iface: "slack", clock },
    );
    sb.control.delay(3_600_000, { paths: [/^\/messages$/] });
    mention(sb, "@**Helper** hi", "slowly");
    await sb.control.waitFor(() => sb.control.delayed() === 1);
    await clock.tick(5_000); // the lookup takes 5 s of the 8 s
    sb.control.delay(0);
    await expect.poll(() => started).toBe(true);
    const answered = () => d.logs.filter((l) => l.route === "/hooks/helper").map((l) => l.status);
    expect(answered()).toEqual([]);
    await clock.tick(3_000); // 8 s since the delivery arrived
    await expect.poll(answered).toEqual([200]);
    gate.resolve();
    // Made after the answer, the reply goes through the API: a real id.
    await expect.poll(() => sent.map((r) => r.id > 0)).toEqual([true]);
    await sb.control.settleWebhooks();
    expect(sb.control.messages().map((m) => m.content)).toEqual(["@**Helper** hi", "slow hi"]);
  });

  it("a Slack-format delivery whose sender posted 25 more messages before the lookup still finds its message", async () => {
    const seen: number[] = [];
    const { sandbox: sb } = await setup(
      bot((b) => b.on("message", (ctx) => void seen.push(ctx.event.message.id))),
      { iface: "slack" },
    );
    sb.control.delay(3_600_000, { paths: [/^\/messages$/] });
    const id = mention(sb, "@**Helper** deploy", "busy");
    await sb.control.waitFor(() => sb.control.delayed() === 1);
    for (let i = 0; i < 25; i++) mention(sb, `more ${i}`, "busy");
    sb.control.delay(0);
    await sb.control.settleWebhooks();
    expect(seen).toEqual([id]);
  });

  it("a Slack-format delivery whose message was edited before the lookup runs the handler on the text that triggered it", async () => {
    const seen: { id: number; content: string }[] = [];
    const { sandbox: sb } = await setup(
      bot((b) =>
        b.on("message", (ctx) => {
          seen.push({ id: ctx.event.message.id, content: ctx.event.message.content });
        }),
      ),
      { iface: "slack" },
    );
    sb.control.delay(3_600_000, { paths: [/^\/messages$/] });
    const id = mention(sb, "@**Helper** deploy prod", "edited");
    await sb.control.waitFor(() => sb.control.delayed() === 1);
    const auth = Buffer.from(`${MEL}:${sb.control.apiKeyOf(MEL)}`).toString("base64");
    const edit = await request(`${sb.url}/api/v1/messages/${id}`, {
      method: "PATCH",
      headers: { authorization: `Basic ${auth}`, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ content: "@**Helper** deploy staging" }).toString(),
    });
    expect(edit.statusCode).toBe(200);
    await edit.body.dump();
    sb.control.delay(0);
    await sb.control.settleWebhooks();
    expect(seen).toEqual([{ id, content: "@**Helper** deploy prod" }]);
  });

  it("a malformed payload gets 400 naming the problem, once its token is right (401 before)", async () => {
    const { running: d } = await setup(bot((b) => b.on("message", () => {})));
    const unauthorized = {
      status: 401,
      body: {
        result: "error",
        msg: "Unauthorized: the token does not match this bot's outgoing_webhook token",
      },
    };
    // Without the token the caller learns nothing of the payload's shape.
    expect(await post(`${d.url}/hooks/helper`, [1, 2])).toEqual(unauthorized);
    expect(await post(`${d.url}/hooks/helper`, { token: "nope" })).toEqual(unauthorized);
    expect(await post(`${d.url}/hooks/helper`, { token: TOKEN })).toEqual({
      status: 400,
      body: {
        result: "error",
        msg: "not an outgoing-webhook payload: expected the Zulip JSON or Slack form format",
      },
    });
    const bad = await post(`${d.url}/hooks/helper`, { token: TOKEN, message: { id: "x" } });
    expect(bad.status).toBe(400);
    expect(bad.body.msg).toMatch(/^the payload's message is malformed: message\.id: /);
  });
});
