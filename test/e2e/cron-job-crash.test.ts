/**
 * A cron job cut short by kill -9: the standup of conversations.md (`ctx.startDialog` for each
 * member in turn) kills its own process after the second start. The next start runs the
 * occurrence again: every member is asked the first question exactly once, and the job's
 * announcement, made before the kill, is not made again. On the file store, and on Redis when one
 * answers (else skipped with one line saying why).
 */
import { writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { crashBackends } from "../support/crash-backends.ts";
import { BOT, botSaid, selfKillingBot, useSelfKillingBots } from "../support/self-killing-bot.ts";

useSelfKillingBots();

const backends = await crashBackends("cron-job-crash");

/**
 * The standup bot. Its first start picks a time 3 s ahead for the job (written beside the flag, so
 * that the restart declares the same job); its job announces the standup, then starts a dialog
 * with each member listed beside the flag, killing the process after the second start, once.
 */
const standup = (flag: string) => `
import { existsSync, readFileSync, writeFileSync } from "node:fs";
const FLAG = ${JSON.stringify(flag)};
export default {
  setup(bot) {
    if (!existsSync(FLAG + ".cron")) {
      const at = new Date(Date.now() + 3_000);
      writeFileSync(FLAG + ".cron", at.getUTCSeconds() + " " + at.getUTCMinutes() + " " + at.getUTCHours() + " * * *");
    }
    bot.cron(readFileSync(FLAG + ".cron", "utf8"), { id: "standup" }, async (ctx) => {
      const members = JSON.parse(readFileSync(FLAG + ".members", "utf8"));
      await ctx.send({ type: "channel", to: "general", topic: "standup", content: "standup begins" });
      for (const [i, id] of members.entries()) {
        await ctx.startDialog(id, "standup");
        if (i === 1 && !existsSync(FLAG)) {
          writeFileSync(FLAG, "killed");
          process.kill(process.pid, "SIGKILL");
        }
      }
    });
    bot.command("standup", async (ctx) => {
      const done = await ctx.prompt("What did you do yesterday?", { timeout: "4h" });
      await ctx.reply("Noted: " + done.text);
    });
  },
};
`;

describe.each(backends)("on the %s", (_name, backendFor) => {
  it("kill -9 between two of a cron job's dialog starts: the next start asks each member once", {
    timeout: 60_000,
  }, async () => {
    let flagFile = "";
    const { sandbox, start } = await selfKillingBot({
      moduleText: (flag) => {
        flagFile = flag;
        return standup(flag);
      },
      stateYaml: (dir) => backendFor(dir).yaml,
    });
    const members = [1, 2, 3, 4, 5].map((i) =>
      sandbox.control.createUser({ email: `m${i}@sandbox.example`, full_name: `Member ${i}` }),
    );
    await writeFile(`${flagFile}.members`, JSON.stringify(members.map((m) => m.user_id)));
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
});
