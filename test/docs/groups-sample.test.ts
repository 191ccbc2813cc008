/**
 * The `ctx.groups` sample of docs/guide/helpers.md, as its reader would run it: the guide's
 * sample is the fixture's text, run in-process against the sandbox over HTTP. Its names come
 * from the users cache, so a command costs no request per member of the group.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { expect, it } from "vitest";
import { defaultOrg } from "../../src/sandbox/org/default-org.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import { runBot } from "../../src/testing/run-bot.ts";
import { repoRoot } from "../support/cli.ts";

const FIXTURE = "test/fixtures/bots/ping-team.ts";
const MEMBER = "member@sandbox.example";

it("is the sample the guide shows", async () => {
  const guide = await readFile(path.join(repoRoot, "docs/guide/helpers.md"), "utf8");
  const sample = /## `ctx\.groups`[\s\S]*?```ts\n([\s\S]*?)```/.exec(guide)?.[1];
  expect(sample).toBe(await readFile(path.join(repoRoot, FIXTURE), "utf8"));
});

it("names the group's members without a request per member, now and minutes later", async () => {
  const org = defaultOrg();
  org.user_groups = [{ name: "standup", members: ["owner@sandbox.example", "bot@sandbox.example"] }];
  const sandbox = await startSandbox({ org });
  const bot = await runBot(sandbox, { bot: `./${FIXTURE}`, name: "team" });
  const lookups = (from: number) =>
    sandbox.control.requests.slice(from).filter((r) => r.method === "GET" && r.path.startsWith("/users"));
  try {
    for (const wait of [0, 5 * 60_000]) {
      sandbox.control.advanceClock(wait);
      const from = sandbox.control.requests.length;
      const reply = await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "ping-team" });
      expect(reply.content).toBe("standup: Olive Owner, Sandbox Bot");
      expect(lookups(from)).toEqual([]);
    }
  } finally {
    await bot.stop();
    await sandbox.stop();
  }
});
