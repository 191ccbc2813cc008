/**
 * Redis losing bothost's keys (flushed, or restarted without persistence) under a running bot with
 * a dialog waiting: the bot's lease is lost with them (said as gone, not as held elsewhere) and
 * taken again, and its start finds the dialog it knew gone from the store. Its person is told to
 * start again (the prompt's `texts.lost`, else the default), where the question waits, once, and
 * can: the next dialog runs as usual. Messages sent while the bot was stopped are caught up from
 * where it was. One `bothost run` on a redis-server of its own (skipped without redis-server on
 * PATH).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { LOST_NOTE } from "../../src/pipeline/dialogs/end-notes.ts";
import {
  flushAll,
  hasRedisServer,
  loseKeysThenSend,
  startInstance,
  taggedModule,
  useOwnRedisCluster,
} from "../support/cluster.ts";
import { botSaid, MEMBER, sayToBot, send } from "../support/e2e-daemon.ts";

const available = hasRedisServer();
if (!available) console.warn("dialogs lost with Redis's keys: redis-server is not on PATH: skipped");

const start = useOwnRedisCluster();

/** An instance running bot b0 as `handlers` (setup lines with `bot`) says, on a Redis of its own. */
async function startWith(prefix: string, handlers: string) {
  const cluster = await start({ prefix, ttl: "3s" });
  await taggedModule(cluster.config, "v1");
  const module = `export default { events: ["message"], setup(bot) {\n${handlers}\n} };\n`;
  await writeFile(path.join(path.dirname(cluster.config.file), "bot.mjs"), module);
  return { ...cluster, instance: await startInstance(cluster.config) };
}

describe.skipIf(!available)("a dialog whose log Redis lost", () => {
  it("has its person told to start again, once, and a new dialog runs", async () => {
    const { redis, sandbox, instance } = await startWith(
      "lost-dialogs",
      `bot.on("message", (ctx) => ctx.event.message.content === "ask", async (ctx) => {
    const lost = "direct" in ctx.where ? { texts: { lost: "Your order was lost: say ask again." } } : {};
    const size = await ctx.prompt("Which size?", lost);
    await ctx.reply("size " + size.text);
  });`,
    );
    send(sandbox, "ask", "c0", "Orders");
    sayToBot(sandbox, "ask");
    await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(["Which size?", "Which size?"]);
    // The questions' logs kept: the dialogs wait.
    await expect
      .poll(
        async () => {
          const res = await fetch(`${instance.url}/admin/dialogs`);
          const listed = (await res.json()) as { dialogs: { deadline?: string }[] }[];
          return listed[0]?.dialogs.map((d) => d.deadline !== undefined);
        },
        { timeout: 15_000 },
      )
      .toEqual([true, true]);
    await flushAll(redis.url);
    const member = sandbox.control.users().find((u) => u.email === MEMBER)!;
    const told = `@**${member.full_name}|${member.user_id}** ${LOST_NOTE}`;
    await expect
      .poll(() => botSaid(sandbox).slice(2).sort(), { timeout: 30_000 })
      .toEqual([told, "Your order was lost: say ask again."].sort());
    // Each where its question waits: named in the channel topic (its case kept), plainly in the direct message.
    const note = sandbox.control.messages().find((m) => m.content === told);
    expect(note?.topic).toBe("Orders");
    const direct = sandbox.control
      .messages()
      .find((m) => m.content === "Your order was lost: say ask again.");
    const view = sandbox.control.messageView(Number(direct?.id));
    expect(view?.type === "private" && view.display_recipient.map((r) => r.id)).toContain(member.user_id);
    expect(
      instance.proc.logs().filter((l) => String(l.msg).startsWith("a dialog's log is gone")),
    ).toHaveLength(2);
    // The lease went with the keys: nobody else holds it, and the line does not say another does.
    const lost = instance.proc.logs().filter((l) => String(l.msg).startsWith("lease lost"));
    expect(lost.map((l) => [l.reason, l.msg])).toEqual([
      [
        "its lease is gone from Redis (it expired, or Redis lost its keys)",
        "lease lost: the bot stopped here until its lease is taken again (here or on another instance), by the instance that takes over the events left in flight",
      ],
    ]);
    // Said in the order it happened: taken at the start, lost, then taken again (the same round
    // takes it again while the bot stops; it starts again once stopped).
    const said = instance.proc.logs().map((l) => String(l.msg));
    const taken = said.flatMap((m, i) =>
      m === "lease acquired; starting the bot on this instance" ? [i] : [],
    );
    const lostAt = said.findIndex((m) => m.startsWith("lease lost"));
    expect(taken).toHaveLength(2);
    expect([taken[0]! < lostAt, lostAt < taken[1]!]).toEqual([true, true]);
    // The answer to the lost question is an ordinary message; a new dialog runs.
    send(sandbox, "ask", "c0", "Orders");
    await expect.poll(() => botSaid(sandbox).length, { timeout: 15_000 }).toBe(5);
    send(sandbox, "large", "c0", "Orders");
    await expect.poll(() => botSaid(sandbox).at(-1), { timeout: 15_000 }).toBe("size large");
  }, 60_000);

  it("catches up the messages sent while the bot was stopped, from where it was here", async () => {
    const { redis, sandbox, instance } = await startWith(
      "lost-ledger",
      `bot.on("message", (ctx) => ctx.event.message.content.startsWith("echo "), (ctx) =>
    ctx.reply("echoed " + ctx.event.message.content.slice(5)));`,
    );
    send(sandbox, "echo 1", "c0", "Misc");
    await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(["echoed 1"]);
    // Its cursor kept, then lost with every key, "echo 2" sent while the bot was stopped.
    await loseKeysThenSend(redis.url, "lost-ledger", sandbox, "echo 2");
    await expect.poll(() => botSaid(sandbox), { timeout: 20_000 }).toEqual(["echoed 1", "echoed 2"]);
    expect(
      instance.proc
        .logs()
        .filter((l) => String(l.msg).startsWith("the state store lost the bot's delivery ledger")),
    ).toHaveLength(1);
    send(sandbox, "echo 3", "c0", "Misc");
    await expect
      .poll(() => botSaid(sandbox), { timeout: 15_000 })
      .toEqual(["echoed 1", "echoed 2", "echoed 3"]);
  }, 60_000);
});
