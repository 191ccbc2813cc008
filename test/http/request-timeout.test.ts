/**
 * A request whose body does not arrive whole: `http.request_timeout` answers it 408 about when it
 * passes, not at Node's next 30 s connection check; a sender that hangs up mid-body is logged as
 * such, not as a failure of bothost's.
 */
import { connect } from "node:net";
import { afterEach, expect, it } from "vitest";
import { type BotDefinition, defineBot } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { type RunningDaemon, startDaemon } from "../support/http-daemon.ts";

let sandbox: Sandbox | undefined;
let running: RunningDaemon | undefined;
afterEach(async () => {
  await running?.stop();
  await sandbox?.stop();
  running = sandbox = undefined;
});

const hook = defineBot({
  setup(bot) {
    bot.webhook("deploys", { verify: { type: "none" } }, () => ({ taken: true }));
  },
});

it("a body sent too slowly is answered 408 within a second of http.request_timeout", async () => {
  sandbox = await startSandbox();
  const email = "hook-bot@sandbox.example";
  sandbox.control.createUser({ email, full_name: "Hook", bot: "generic" });
  running = await startDaemon(
    sandbox,
    { hook: { email, definition: hook as BotDefinition<never, never> } },
    { http: "request_timeout: 1s" },
  );
  const { port } = new URL(running.url);
  const started = Date.now();
  const answer = await new Promise<{ ms: number; head: string }>((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1", () => {
      socket.write(
        "POST /webhooks/hook/deploys HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
      );
      // A byte every 200 ms: the whole body would take 20 s.
      const trickle = setInterval(() => socket.write(" "), 200);
      socket.once("data", (data) => {
        clearInterval(trickle);
        socket.destroy();
        resolve({ ms: Date.now() - started, head: String(data).split("\r\n")[0]! });
      });
      socket.once("error", (err) => {
        clearInterval(trickle);
        reject(err);
      });
    });
  });
  expect(answer.head).toBe("HTTP/1.1 408 Request Timeout");
  expect(answer.ms).toBeGreaterThanOrEqual(1_000);
  expect(answer.ms).toBeLessThan(3_000);
}, 40_000);

it("a sender that closes the connection mid-body is logged at info, not as a failed request", async () => {
  sandbox = await startSandbox();
  const email = "hook-bot@sandbox.example";
  sandbox.control.createUser({ email, full_name: "Hook", bot: "generic" });
  running = await startDaemon(sandbox, { hook: { email, definition: hook as BotDefinition<never, never> } });
  const { port } = new URL(running.url);
  const socket = connect(Number(port), "127.0.0.1");
  await new Promise((resolve) => socket.once("connect", resolve));
  socket.write(
    'POST /webhooks/hook/deploys HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a"',
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
  socket.destroy();
  const logs = running.logs;
  await expect
    .poll(() => logs.find((l) => String(l.msg).startsWith("http request: the client closed")))
    .toMatchObject({ level: 30, method: "POST", path: "/webhooks/hook/deploys", remoteAddress: "127.0.0.1" });
  expect(logs.filter((l) => (l.level as number) >= 50)).toEqual([]);
});
