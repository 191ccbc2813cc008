/**
 * The approvals bot's deploy webhook failing on every attempt, then fixed and the request's dead
 * letter retried, as shipped-bots.md tells the operator: the retry calls the webhook again and
 * the topic then shows the approval. The attempts took longer than the progress's 30 s, so its
 * failure note was posted as a new message: the retry's result is posted below it, and the earlier
 * messages point at it. Before, the retry called the webhook and showed nothing: the topic still
 * read that the webhook had failed. A real daemon in this process, the sandbox over
 * HTTP, a receiver on port 0.
 */
import { createServer, type Server } from "node:http";
import { afterEach, expect, it } from "vitest";
import approvals from "../../../bots/approvals.ts";
import { startSandbox } from "../../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../../src/sandbox/types.ts";
import { type InProcessDaemon, startInProcessDaemon } from "../../../src/testing/in-process-daemon.ts";
import { TestClock } from "../../../src/testing/test-clock.ts";
import { BOT, RELEASE_ORG, REQ, RITA } from "../../support/release-org.ts";

let hook: Server | undefined;
let sandbox: Sandbox | undefined;
let running: InProcessDaemon | undefined;
afterEach(async () => {
  await running?.stop();
  await sandbox?.stop();
  await new Promise((resolve) => (hook ? hook.close(resolve) : resolve(undefined)));
  [hook, sandbox, running] = [undefined, undefined, undefined];
});

it("a retried letter of an approval whose webhook failed calls it again and shows the approval", async () => {
  let status = 500;
  let calls = 0;
  hook = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      calls++;
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => hook!.listen(0, "127.0.0.1", resolve));
  const webhook_url = `http://127.0.0.1:${(hook.address() as { port: number }).port}/deploy`;
  // The attempts take longer than the progress's 30 s: its failure note is posted as a new message.
  const clock = new TestClock({ held: true });
  sandbox = await startSandbox({ org: RELEASE_ORG, clock });
  running = await startInProcessDaemon(
    sandbox,
    {
      approvals: {
        email: BOT,
        definition: approvals,
        settings: { group: "release-managers", webhook_url },
        extra: "retries: { attempts: 2, backoff: 31s, max_backoff: 31s }",
      },
    },
    { clock },
  );
  const control = sandbox.control;
  const botId = control.users().find((u) => u.email === BOT)!.user_id;
  const said = () =>
    control
      .messages()
      .filter((m) => m.sender_id === botId)
      .map((m) => String(m.content));
  const say = (from: string, content: string) =>
    control.sendAs(from, { type: "stream", to: "ops", topic: "deploys", content });
  say(REQ, "@**Approvals** deploy api 1.4.2");
  await expect.poll(() => said().length, { timeout: 10_000 }).toBe(1);
  say(RITA, "approve");
  const failed =
    "Deploy of api 1.4.2 approved by Rita Release. The deploy webhook did not answer with success: ask an operator to retry it (`bothost failed retry`).";
  await expect.poll(() => clock.pendingDelays(), { timeout: 10_000 }).toContain(31_000);
  await clock.advance(31_000);
  await expect.poll(() => said().at(-1), { timeout: 15_000 }).toBe(failed);
  await expect.poll(async () => (await running!.daemon.letters.list()).length, { timeout: 10_000 }).toBe(1);
  expect(calls).toBe(2);

  status = 204;
  const [letter] = await running.daemon.letters.list();
  await running.daemon.letters.retry({ ids: [letter!.id] });
  await expect
    .poll(() => said().at(-1), { timeout: 15_000 })
    .toBe("Deploy of api 1.4.2 approved by Rita Release.");
  expect(calls).toBe(3);
  // The failed run's messages point at the result, posted below them as a new message (the
  // result is posted first, then they are edited).
  await expect
    .poll(() => said().slice(1), { timeout: 15_000 })
    .toEqual([
      "(finished: see below)",
      "(finished: see below)",
      "Deploy of api 1.4.2 approved by Rita Release.",
    ]);
  await expect.poll(async () => (await running!.daemon.letters.list()).length).toBe(0);
});
