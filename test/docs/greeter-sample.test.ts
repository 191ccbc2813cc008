/**
 * The greeter sample of docs/guide/writing-bots.md, as its reader would run it: the guide's
 * sample, written to a module of its own, run in-process against the sandbox over HTTP. Its
 * middleware says it sees every event: registered before the handlers, it wraps the direct
 * message the first handler answers (middleware runs in registration order, and a handler that
 * does not call `next()` ends the chain there).
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import { runBot } from "../../src/testing/run-bot.ts";
import { repoRoot } from "../support/cli.ts";

const MEMBER = "member@sandbox.example";

it("greets a direct message, and its middleware sees that message", async () => {
  const guide = await readFile(path.join(repoRoot, "docs/guide/writing-bots.md"), "utf8");
  const sample = /## Handlers, filters and middleware\n\n```ts\n([\s\S]*?)```/.exec(guide)?.[1];
  expect(sample).toContain("bot.use(");
  // Next to the tests, so that the sample's `import … from "bothost"` resolves as in a project.
  const dir = await mkdtemp(path.join(repoRoot, "test/fixtures/bots/greeter-"));
  await writeFile(path.join(dir, "greeter.ts"), sample!);
  const sandbox = await startSandbox();
  const bot = await runBot(sandbox, {
    bot: path.join(dir, "greeter.ts"),
    name: "greeter",
    settings: { greeting: "Hi" },
  });
  try {
    const reply = await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "hello" });
    expect(reply.content).toBe("Hi, Mel Member!");
    await bot.handled(reply.id - 1);
    await expect
      .poll(() => bot.logs().filter((l) => l.msg === "handled" && l.messageId === reply.id - 1))
      .toHaveLength(1);
  } finally {
    await bot.stop();
    await sandbox.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
