/**
 * A cron job cut short by kill -9: the standup of conversations.md (`ctx.startDialog` for each
 * member in turn) kills its own process after the second start. The next start runs the
 * occurrence again: every member is asked the first question exactly once, and the job's
 * announcement, made before the kill, is not made again. And a job's `ctx.external`: `bothost
 * run` armed with the `external-made` crash point (src/effects/failpoints.ts) SIGKILLs itself
 * once the call returned and its record was committed, before the job sends what it got; the
 * next start runs the occurrence again, finds the call in its record (not made again), and sends
 * the first result. On the file store, and the standup case also on Redis when one answers (else
 * skipped with one line saying why).
 */
import { readFile, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { crashBackends } from "../support/crash-backends.ts";
import {
  BOT,
  botSaid,
  dailyJobModule,
  selfKillingBot,
  useSelfKillingBots,
} from "../support/self-killing-bot.ts";

useSelfKillingBots();

const backends = await crashBackends("cron-job-crash");

/**
 * The standup bot. Its job (3 s after its first start) announces the standup, then starts a
 * dialog with each member listed beside the flag, killing the process after the second start,
 * once.
 */
const standup = (flag: string) =>
  dailyJobModule(flag, {
    id: "standup",
    aheadS: 3,
    job: `
      const members = JSON.parse(readFileSync(FLAG + ".members", "utf8"));
      await ctx.send({ type: "channel", to: "general", topic: "standup", content: "standup begins" });
      for (const [i, id] of members.entries()) {
        await ctx.startDialog(id, "standup");
        if (i === 1 && !existsSync(FLAG)) {
          writeFileSync(FLAG, "killed");
          process.kill(process.pid, "SIGKILL");
        }
      }`,
    more: `
    bot.command("standup", async (ctx) => {
      const done = await ctx.prompt("What did you do yesterday?", { timeout: "4h" });
      await ctx.reply("Noted: " + done.text);
    });`,
  });

/**
 * A bot whose job (5 s after its first start) opens a "ticket" outside bothost: each call
 * appends a line to `<flag>.calls` and returns the number of lines, which the job then posts.
 * `killInCall`: the first call kills the process while it is under way, so nothing of the
 * occurrence is recorded but its mark as under way.
 */
const tickets = (killInCall: boolean) => (flag: string) =>
  dailyJobModule(flag, {
    id: "tickets",
    aheadS: 5,
    job: `
      const ticket = await ctx.external("open ticket", () => {
        appendFileSync(FLAG + ".calls", "call\\n");
        if (${killInCall} && !existsSync(FLAG)) {
          writeFileSync(FLAG, "killed");
          process.kill(process.pid, "SIGKILL");
        }
        return { id: readFileSync(FLAG + ".calls", "utf8").trim().split("\\n").length };
      });
      await ctx.send({ type: "channel", to: "general", topic: "tickets", content: "opened ticket " + ticket.id });`,
  });

/** The calls the tickets job's `fn` made, one line each. */
const callsOf = async (flag: string) =>
  (await readFile(`${flag}.calls`, "utf8").catch(() => "")).split("\n").filter(Boolean);

describe.each(backends)("on the %s", (name, backendFor) => {
  const setUp = (moduleText: (flag: string) => string) =>
    selfKillingBot({ moduleText, stateYaml: (dir) => backendFor(dir).yaml });

  it("kill -9 between two of a cron job's dialog starts: the next start asks each member once", {
    timeout: 60_000,
  }, async () => {
    const { sandbox, flag, start } = await setUp(standup);
    const members = [1, 2, 3, 4, 5].map((i) =>
      sandbox.control.createUser({ email: `m${i}@sandbox.example`, full_name: `Member ${i}` }),
    );
    await writeFile(`${flag}.members`, JSON.stringify(members.map((m) => m.user_id)));
    const killed = await start();
    expect(await killed.exited).toEqual({ code: null, signal: "SIGKILL" });
    const asked = () => botSaid(sandbox).filter((c) => c === "What did you do yesterday?").length;
    expect(asked()).toBeLessThanOrEqual(2);

    await start();
    await expect.poll(asked, { timeout: 20_000 }).toBe(5);
    // Each member answers; their answer is taken after their one question.
    for (const m of members)
      sandbox.control.sendAs(m.email, { type: "direct", to: [BOT], content: `work of ${m.full_name}` });
    await expect
      .poll(() => botSaid(sandbox).filter((c) => c.startsWith("Noted: ")).length, {
        timeout: 20_000,
      })
      .toBe(5);
    expect(asked()).toBe(5);
    expect(botSaid(sandbox).filter((c) => c === "standup begins")).toHaveLength(1);
    const askedOf = (userId: number) =>
      sandbox.control
        .messages()
        .filter(
          (m) => m.content === "What did you do yesterday?" && (m.dm_user_ids as number[]).includes(userId),
        );
    for (const m of members) expect(askedOf(m.user_id)).toHaveLength(1);
  });

  // The store's part is any effect record's (the standup case runs on both stores).
  it.runIf(name === "file store")(
    "kill -9 after a cron job's external call was recorded: not called again, its result sent",
    {
      timeout: 60_000,
    },
    async () => {
      const { sandbox, flag, start } = await setUp(tickets(false));
      const calls = () => callsOf(flag);
      const armed = await start({ BOTHOST_FAILPOINTS: "external-made" });
      // Killed at the point, not failed before it (a job whose context lacks `external` throws).
      await expect.poll(() => armed.child.signalCode, { timeout: 20_000 }).toBe("SIGKILL");
      expect(await calls()).toHaveLength(1);
      expect(botSaid(sandbox)).toEqual([]);

      const restarted = await start();
      await restarted.waitForLog((l) => String(l.msg).startsWith("a cron job's run was cut short"), 20_000);
      await expect.poll(() => botSaid(sandbox), { timeout: 20_000 }).toEqual(["opened ticket 1"]);
      expect(await calls()).toHaveLength(1);
    },
  );

  it.runIf(name === "file store")(
    "kill -9 while a cron job's external call is under way: the next start runs the occurrence again",
    {
      timeout: 60_000,
    },
    async () => {
      const { sandbox, flag, start } = await setUp(tickets(true));
      const calls = () => callsOf(flag);
      const killed = await start();
      expect(await killed.exited).toEqual({ code: null, signal: "SIGKILL" });
      expect(await calls()).toHaveLength(1);

      // The occurrence was marked under way before the call: it is not taken for one missed.
      const restarted = await start();
      await restarted.waitForLog((l) => String(l.msg).startsWith("a cron job's run was cut short"), 20_000);
      await expect.poll(() => botSaid(sandbox), { timeout: 20_000 }).toEqual(["opened ticket 2"]);
      expect(await calls()).toHaveLength(2);
    },
  );
});
