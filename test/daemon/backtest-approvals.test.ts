/**
 * A backtest of the approvals bot over a request that was approved: the dialog is followed
 * through the history, and the deploy webhook, a call outside what bothost captures, is not made
 * (a backtest must never deploy). The report shows what the bot would have said.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { loadBots } from "../../src/bot/load-bots.ts";
import { loadConfigWithSource } from "../../src/config/load-config.ts";
import { backtest } from "../../src/daemon/backtest.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { repoRoot } from "../support/cli.ts";
import { BOT, RELEASE_ORG, REQ, RITA } from "../support/release-org.ts";

let sandbox: Sandbox | undefined;
let hook: Server | undefined;
let dir: string | undefined;

afterEach(async () => {
  await sandbox?.stop();
  await new Promise((resolve) => (hook ? hook.close(resolve) : resolve(undefined)));
  if (dir) await rm(dir, { recursive: true, force: true });
  sandbox = hook = dir = undefined;
});

it("follows an approved request and never calls the deploy webhook", async () => {
  const calls: string[] = [];
  hook = createServer((req, res) => {
    calls.push(String(req.url));
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => hook!.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(hook.address() as { port: number }).port}/deploy`;

  sandbox = await startSandbox({ org: RELEASE_ORG });
  const { control } = sandbox;
  const say = (who: string, content: string) =>
    control.sendAs(who, { type: "stream", to: "ops", topic: "deploys", content }).id;
  say(REQ, "@**Approvals** deploy api 1.4.2");
  const approval = say(RITA, "1");

  dir = await mkdtemp(join(tmpdir(), "bothost-backtest-approvals-"));
  const file = join(dir, "bothost.yaml");
  const apiKey = control.apiKeyOf(BOT);
  await writeFile(
    file,
    [
      `server:\n  url: ${sandbox.url}`,
      `state:\n  path: ${join(dir, "state")}`,
      "bots:\n  approvals:",
      `    module: ${join(repoRoot, "bots/approvals.ts")}\n    email: ${BOT}\n    api_key: ${apiKey}`,
      `    settings: { group: release-managers, webhook_url: "${url}", webhook_secret: a-deploy-hook-secret-of-some-length }`,
    ].join("\n"),
  );
  const { config, source } = await loadConfigWithSource(file);
  const [loaded] = await loadBots(config, source);
  const report = await backtest({
    bot: loaded!,
    url: sandbox.url,
    apiKey,
    range: { narrows: [[]], limit: 100 },
  });

  console.log(
    JSON.stringify(
      report.findings.map((f) => [f.id, f.error, f.actions.map((a) => a.does)]),
      null,
      1,
    ),
  );
  expect(calls).toEqual([]);
  const said = report.findings
    .find((f) => f.id === approval)
    ?.actions.map((a) => (a.call.params as { content?: string }).content);
  expect(said?.join("\n")).toContain(
    "Deploy of api 1.4.2 approved by Rita Release. (a dry run: the deploy webhook is not called)",
  );
});
