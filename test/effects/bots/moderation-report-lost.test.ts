/**
 * The moderation bot when the gateway in front of the server loses the answer to its report
 * (a 502 or 504 after the server made it): the report counts as made, the handler's run again is
 * told so (`earlier: true`, `unconfirmed: true`), the sender is told once, as `notify_sender`
 * promises, and a warning says the report may not have arrived; no second report. So for a report
 * its run's handler_timeout cut as it waited for the answer. It imports
 * "bothost", which resolves to dist/: run `npm run build` first (`npm test` does).
 */
import moderation from "../../../bots/moderation.ts";
import { expect, test } from "../../../src/testing/vitest.ts";

test.for([502, 504])(
  "a report whose answer a gateway lost (%i) still tells the sender, once",
  async (status, { runBot, sandbox }) => {
    const bot = await runBot({
      bot: moderation,
      name: "moderation",
      config: "retries: { attempts: 3, backoff: 10ms }",
      settings: { notify_sender: "Hi {{name}}: {{details}}.", rules: { keywords: { words: ["scam"] } } },
    });
    sandbox.control.failNext(1, { status, after: true, paths: [/\/report$/] });
    const id = await bot.post("member@sandbox.example", {
      type: "channel",
      to: "general",
      topic: "deals",
      content: "a scam for you",
    });
    await bot.handled(id);
    const reports = sandbox.control
      .messages()
      .filter((m) => String(m.content).includes("reported a message"));
    expect(reports).toHaveLength(1);
    expect(bot.replies().map((r) => r.content)).toEqual(['Hi Mel Member: blocked word: uses "scam".']);
    // The bot cannot tell a report made from one lost on its way: the operator is told to look.
    const unsure = bot.logs().filter((l) => String(l.msg).includes("got no answer"));
    expect(unsure).toMatchObject([{ level: 40, messageId: id, rules: ["keywords"] }]);
    expect(unsure[0]!.msg).toBe(
      `message ${id}'s report was sent by an earlier run of its handler, which got no answer (cut ` +
        "short by a kill, a stop or a timeout, or its answer lost): it counts as made and is not sent " +
        "again; see in the moderation request channel whether it arrived",
    );
    expect(bot.logs().filter((l) => String(l.msg).includes("reported by an earlier run"))).toEqual([]);
  },
);

test("a report its handler_timeout cut as it waited for the answer still tells the sender, once", async ({
  runBot,
  sandbox,
}) => {
  const bot = await runBot({
    bot: moderation,
    name: "moderation",
    // Long enough for the first run to reach its report on a loaded machine.
    config: "handler_timeout: 3s\nretries: { attempts: 3, backoff: 10ms }",
    settings: { notify_sender: "Hi {{name}}: {{details}}.", rules: { keywords: { words: ["scam"] } } },
  });
  // The report's request is held at the server until the first run's handler_timeout aborts it.
  sandbox.control.delay(60_000, { paths: [/\/report$/] });
  const id = await bot.post("member@sandbox.example", {
    type: "channel",
    to: "general",
    topic: "deals",
    content: "a scam for you",
  });
  await bot.handled(id, { timeoutMs: 20_000 });
  sandbox.control.delay(0);
  // Cut as it waited: the report counts as made (maybe sent), so the run again tells the sender.
  expect(bot.replies().map((r) => r.content)).toEqual(['Hi Mel Member: blocked word: uses "scam".']);
  expect(bot.logs().filter((l) => String(l.msg).includes("got no answer"))).toMatchObject([
    { level: 40, messageId: id },
  ]);
  expect(bot.logs().filter((l) => String(l.msg).includes("not reported"))).toEqual([]);
});
