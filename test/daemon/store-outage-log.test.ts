/**
 * What an operator reads while the state store fails a busy bot's writes: the embedded store's
 * disk full for real (test/support/file-size-limit.ts) while messages come from many
 * conversations. The outage is said once; of the lines each event's tries would repeat (run again
 * after a pause, waiting for the store) only the first of each kind is at warn, the rest at debug;
 * a handler's own failure keeps its levels; the outage's end line and `/metrics` count the events
 * it had run again and made wait. A real daemon in this process against the sandbox, on the test
 * clock.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { request } from "undici";
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { type Booted, bootDaemon } from "../../src/daemon/boot.ts";
import { STORE_OUTAGE_LINE, STORE_WAIT_LINE } from "../../src/pipeline/handler-failures.ts";
import { STORE_BACK_LINE, STORE_FAILING_LINE } from "../../src/pipeline/store-health.ts";
import { botEmail, orgWithBots, startE2eSandbox, writeConfig } from "../support/e2e-daemon.ts";
import { fillDiskAt, limitFiles } from "../support/file-size-limit.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { parsePrometheus, sampleValue } from "../support/prometheus-text.ts";
import { botSaid, saidAtLeast } from "../support/self-killing-bot.ts";
import { answers, moduleText, send, useModuleFiles } from "./module-files.ts";

const BOT = "tally-bot@sandbox.example";
/** The daemon's HTTP listener, for `/metrics`. */
const HTTP = "http:\n  listen: 127.0.0.1:0";
const RETRY_LINE = `${STORE_OUTAGE_LINE}; running it again after a pause`;
const OWN_RETRY_LINE = "handler failed; running it again after a pause";
/** Conversations (one person's direct messages each), two messages each, during the outage. */
const PEOPLE = 10;

let up: GatedDaemon | undefined;
/** The reload case's daemon, and what else it opened. */
let booted: Booted | undefined;
const opened: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  limitFiles("unlimited");
  await closeGatedDaemon(up);
  up = undefined;
  await booted?.stop();
  booted = undefined;
  for (const close of opened.splice(0)) await close();
});

const tally = defineBot({
  setup(bot) {
    bot.on("message", async (ctx) => {
      if (ctx.text === "boom") throw new Error("the handler's own failure");
      const n = ((await ctx.state.get<number>("n")) ?? 0) + 1;
      await ctx.state.set("n", n);
      await ctx.reply(`${ctx.text}: ${n}`);
    });
  },
});

it("20 messages from 10 conversations during an outage: a few warn lines, not some per message; the handler's own failure at its levels; the end line counts the events", async () => {
  up = await startGatedDaemon({
    name: "tally",
    email: BOT,
    fullName: "Tally",
    definition: tally,
    global: HTTP,
  });
  const { running, dm, sandbox, clock } = up;
  const a = dm("a");
  expect(await saidAtLeast(sandbox, BOT, 1)).toEqual(["a: 1"]);
  await running.ledger.until("tally", a, 5_000, () => new Error("a never recorded handled"));
  const people = Array.from({ length: PEOPLE }, (_, i) => `person${i}@sandbox.example`);
  for (const [i, email] of [...people, "boomer@sandbox.example"].entries())
    sandbox.control.createUser({ email, full_name: `Person ${i}` });
  const from = running.logs.length;
  fillDiskAt(join(up.dir, "state.log"));
  for (const round of [1, 2])
    for (const email of people)
      sandbox.control.sendAs(email, { type: "direct", to: [BOT], content: `${email} ${round}` });
  sandbox.control.sendAs("boomer@sandbox.example", { type: "direct", to: [BOT], content: "boom" });
  // Every attempt (2, 4, 8, 16 s apart) of each conversation's first message, then its wait.
  for (let n = 1; n <= 4; n++) {
    await expect.poll(() => running.logged(RETRY_LINE).length).toBe(PEOPLE * n);
    await expect.poll(() => running.logged(OWN_RETRY_LINE).length).toBe(n);
    await clock.advance(2_000 * 2 ** (n - 1));
  }
  await expect.poll(() => running.logged(STORE_WAIT_LINE).length).toBe(PEOPLE);
  for (const pause of [1_000, 2_000, 4_000, 8_000]) await clock.advance(pause);
  await expect.poll(() => running.logged(STORE_OUTAGE_LINE).length).toBeGreaterThan(PEOPLE * 5);

  const warned = running.logs.slice(from).filter((l) => l.level === 40);
  const outage = warned.filter((l) => l.msg !== OWN_RETRY_LINE).map((l) => l.msg);
  // The outage said once, and at most the first line of each kind an event's tries repeat (a
  // run's first failure at debug when the outage was said before it, by the ledger's save say).
  expect(outage.filter((msg) => msg === STORE_FAILING_LINE)).toHaveLength(1);
  expect(outage).toContain(RETRY_LINE);
  expect(outage).toContain(STORE_WAIT_LINE);
  expect(new Set(outage).size).toBe(outage.length);
  expect(outage.length).toBeLessThanOrEqual(4);
  expect([STORE_FAILING_LINE, STORE_OUTAGE_LINE, RETRY_LINE, STORE_WAIT_LINE]).toEqual(
    expect.arrayContaining(outage),
  );
  expect(running.logged(RETRY_LINE).filter((l) => l.level === 20)).toHaveLength(PEOPLE * 4 - 1);
  expect(running.logged(STORE_WAIT_LINE).filter((l) => l.level === 20)).toHaveLength(PEOPLE - 1);
  // The handler's own failure: each attempt an error, each run again a warn.
  expect(running.logged(OWN_RETRY_LINE).map((l) => l.level)).toEqual([40, 40, 40, 40]);
  expect(running.logged("handler failed").filter((l) => l.msg === "handler failed")).toMatchObject(
    Array.from({ length: 5 }, () => ({ level: 50 })),
  );

  limitFiles("unlimited");
  await expect
    .poll(async () => {
      await clock.advance(30_000);
      return running.logged(STORE_BACK_LINE).length;
    })
    .toBe(1);
  expect(running.logged(STORE_BACK_LINE)[0]).toMatchObject({
    level: 30,
    retried: PEOPLE,
    waited: PEOPLE,
    failures: expect.any(Number),
  });
  const metrics = parsePrometheus(await (await request(`${running.daemon.http!.url}/metrics`)).body.text());
  expect(sampleValue(metrics, "bothost_events_store_waits_total", { bot: "tally" })).toBe(PEOPLE);
  // Every message answered once the store is back.
  await expect
    .poll(async () => {
      await clock.advance(1_000);
      return botSaid(sandbox, BOT).length;
    })
    .toBe(1 + PEOPLE * 2);
  const answered = botSaid(sandbox, BOT).map((t) => t.replace(/: \d+$/, ""));
  expect(answered.sort()).toEqual(["a", ...people.flatMap((p) => [`${p} 1`, `${p} 2`])].sort());
});

it("a reload while the outage lasts: the bot's new runtime says it again, once (its counts from zero)", async () => {
  const sandbox = await startE2eSandbox(orgWithBots(1));
  opened.push(() => sandbox.stop());
  const retries = "retries:\n  backoff: 50ms\n  max_backoff: 100ms\n  attempts: 2";
  const config = await writeConfig(sandbox, { a: { email: botEmail(0), extra: retries } });
  opened.push(config.cleanup);
  const file = await useModuleFiles(config, { a: moduleText("a v1") });
  Object.assign(process.env, config.env);
  const logs: Record<string, unknown>[] = [];
  const write = (chunk: string) => {
    for (const line of chunk.split("\n")) if (line) logs.push(JSON.parse(line));
  };
  booted = await bootDaemon(config.file, { logLevel: "debug", logDestination: { write } });
  await booted.daemon.start();
  const first = send(sandbox, "c0");
  await expect.poll(() => answers(sandbox, first), { timeout: 15_000 }).toEqual([`a v1 handled ${first}`]);
  const said = (msg: string) => logs.filter((l) => l.msg === msg);
  fillDiskAt(join(config.stateDir, "state.log"));
  send(sandbox, "c0");
  await expect.poll(() => said(STORE_WAIT_LINE).length, { timeout: 15_000 }).toBe(1);
  expect(said(STORE_FAILING_LINE)).toHaveLength(1);
  await writeFile(file("a"), moduleText("a v2"));
  expect(await booted.daemon.reload()).toMatchObject({ restart: ["a"] });
  // The new runtime's run (the message left unhandled, caught up) meets the outage: said again,
  // then its tries (run again, waiting, a wait's try) at debug.
  const before = said(STORE_OUTAGE_LINE).length;
  await expect.poll(() => said(STORE_WAIT_LINE).length, { timeout: 15_000 }).toBe(2);
  await expect.poll(() => said(STORE_OUTAGE_LINE).length, { timeout: 15_000 }).toBeGreaterThan(before + 2);
  expect(said(STORE_FAILING_LINE).map((l) => l.level)).toEqual([40, 40]);
});
