/**
 * A reload sets every new bot version up before it stops an old one: a setup that throws refuses
 * the reload and the old version keeps running untouched. `/readyz` follows the bots a reload
 * restarted, and a bot whose setup failed is not ready, with the reason.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Booted, bootDaemon } from "../../src/daemon/boot.ts";
import type { BotReadiness } from "../../src/http/readiness.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { botEmail, orgWithBots, startE2eSandbox, useE2eCleanup, writeConfig } from "../support/e2e-daemon.ts";
import { answers, moduleText, send, useModuleFiles } from "./module-files.ts";

useE2eCleanup();
let booted: Booted | undefined;
afterEach(async () => {
  await booted?.stop();
  booted = undefined;
});

const NAMES = ["greeter", "helper", "bad"] as const;

/** Three bots, each with its own module file in the config's folder, and an HTTP listener. */
/** The three bots at v1, each started and ready. */
async function startReady(sandbox: Sandbox) {
  const d = await start(sandbox, {
    greeter: moduleText("v1"),
    helper: moduleText("v1"),
    bad: moduleText("v1"),
  });
  await expect.poll(async () => (await d.readyz()).status, { timeout: 15_000 }).toBe(200);
  return d;
}

/** The error a reload was refused with; undefined when it was applied. */
function refusalOf(daemon: { reload(): Promise<unknown> }) {
  return daemon.reload().then(
    () => undefined,
    (err: unknown) => err as { code: string; message: string },
  );
}

async function start(sandbox: Sandbox, modules: Record<(typeof NAMES)[number], string>) {
  const config = await writeConfig(
    sandbox,
    Object.fromEntries(NAMES.map((name, i) => [name, { email: botEmail(i) }])),
    { global: "http:\n  listen: 127.0.0.1:0" },
  );
  const file = await useModuleFiles(config, modules);
  Object.assign(process.env, config.env);
  booted = await bootDaemon(config.file, { logLevel: "silent" });
  const report = await booted.daemon.start();
  const readyz = async () => {
    const res = await fetch(`${booted!.daemon.http!.url}/readyz`);
    return { status: res.status, body: (await res.json()) as { ready: boolean; bots: BotReadiness[] } };
  };
  const bot = async (name: string) => (await readyz()).body.bots.find((b) => b.bot === name);
  return {
    config,
    report,
    daemon: booted.daemon,
    readyz,
    bot,
    file,
  };
}

describe("/readyz", () => {
  it("reports the bots a reload restarted as at first start (polling, with the last contact), never standby", async () => {
    const sandbox = await startE2eSandbox(orgWithBots(3));
    const d = await start(sandbox, {
      greeter: moduleText("v1"),
      helper: moduleText("v1"),
      bad: moduleText("v1"),
    });
    expect(d.report.started).toHaveLength(3);
    await expect.poll(async () => (await d.readyz()).status, { timeout: 15_000 }).toBe(200);

    await writeFile(d.file("greeter"), moduleText("v2"));
    await writeFile(d.file("helper"), moduleText("v2"));
    const report = await d.daemon.reload();
    expect(report).toMatchObject({ restart: ["greeter", "helper"], failed: [] });
    await expect
      .poll(async () => (await d.readyz()).body, { timeout: 15_000 })
      .toEqual({
        ready: true,
        bots: expect.arrayContaining(
          NAMES.map((bot) => ({ bot, state: "polling", ready: true, lastContactAgoMs: expect.any(Number) })),
        ),
      });
    expect((await d.readyz()).body.bots.map((b) => b.state)).not.toContain("standby");
    // The restarted bot runs its new version.
    const id = send(sandbox, "c0");
    await expect.poll(() => answers(sandbox, id), { timeout: 15_000 }).toEqual(["v2 handled " + id]);
  });

  it("says a bot whose setup failed at start is not ready, with the reason, until a reload fixes it", async () => {
    const sandbox = await startE2eSandbox(orgWithBots(3));
    const d = await start(sandbox, {
      greeter: moduleText("v1"),
      helper: moduleText("v1"),
      bad: moduleText("v1", 'bot.cron("*/5 * * *", {}, () => {});'),
    });
    expect(d.report.failed.map((f) => f.name)).toEqual(["bad"]);
    const { status, body } = await d.readyz();
    expect(status).toBe(503);
    expect(body.ready).toBe(false);
    expect(await d.bot("bad")).toEqual({
      bot: "bad",
      state: "failed",
      ready: false,
      reason: expect.stringMatching(
        /^it failed to start: \S+\/bad\.mjs:\d+:\d+: bot\.cron\("\*\/5 \* \* \*"\)/,
      ),
    });

    await writeFile(d.file("bad"), moduleText("v2"));
    expect(await d.daemon.reload()).toMatchObject({ restart: ["bad"], failed: [] });
    await expect.poll(async () => (await d.readyz()).status, { timeout: 15_000 }).toBe(200);
    expect(await d.bot("bad")).toMatchObject({ state: "polling", ready: true });
  });
});

describe("a reload whose new version does not set up", () => {
  it.each([
    [
      "a bad cron expression",
      'bot.cron("*/5 * * *", {}, () => {});',
      /bot\.cron\("\*\/5 \* \* \*"\).*\[BOT_SETUP_INVALID\]$/,
    ],
    [
      "a filter key typo",
      'bot.on("message", { chanel: "general" }, () => {});',
      /chanel.*\[ROUTER_INVALID_FILTER\]$/,
    ],
    [
      "the module's own error",
      'throw new TypeError("settings.x is missing");',
      /setup threw TypeError at \S*\/bad\.mjs:\d+:\d+: settings\.x is missing$/,
    ],
    [
      "an error quoting a secret of the config (the bot's key): hidden",
      'throw new TypeError("refused for key " + process.env.E2E_KEY_BAD);',
      /setup threw TypeError at \S*\/bad\.mjs:\d+:\d+: refused for key \[hidden\]$/,
    ],
  ])("is refused for %s, and the old version keeps running untouched", async (_what, extra, problem) => {
    const sandbox = await startE2eSandbox(orgWithBots(3));
    const d = await startReady(sandbox);
    const queue = sandbox.control.queues().find((q) => q.email === botEmail(2))?.queue_id;
    expect(queue).toBeDefined();

    await writeFile(d.file("bad"), moduleText("v2", extra));
    await writeFile(d.file("greeter"), moduleText("v2"));
    const refused = await refusalOf(d.daemon);
    expect(refused?.code).toBe("RELOAD_REFUSED");
    // One line: the bot, its file, the problem.
    expect(refused?.message.split("\n")).toEqual([expect.stringMatching(/^bots\.bad \(\.\/bad\.mjs\): /)]);
    expect(refused?.message).toMatch(problem);

    // Nothing changed: not even the good edit of the other bot, as for a config with errors.
    expect(sandbox.control.queues().find((q) => q.email === botEmail(2))?.queue_id).toBe(queue);
    const status = await d.daemon.status();
    expect(status.bots.map((b) => [b.name, b.state])).toEqual(NAMES.map((n) => [n, "running"]));
    const ids = [send(sandbox, "c2"), send(sandbox, "c0")];
    for (const id of ids)
      await expect.poll(() => answers(sandbox, id), { timeout: 15_000 }).toEqual(["v1 handled " + id]);
    expect((await d.readyz()).status).toBe(200);
  });
});

describe("a reload that gives a running bot credentials the server rejects", () => {
  it("is refused, naming the bot and the account, and the bot goes on with its old key", async () => {
    const sandbox = await startE2eSandbox(orgWithBots(3));
    const d = await startReady(sandbox);
    const before = sandbox.control.requests.length;

    const wrongKey = "W".repeat(32);
    process.env.E2E_KEY_GREETER = wrongKey;
    await writeFile(d.file("helper"), moduleText("v2"));
    const refused = await refusalOf(d.daemon);
    expect(refused?.code).toBe("RELOAD_REFUSED");
    expect(refused?.message.split("\n")).toEqual([
      expect.stringMatching(
        new RegExp(
          `^bots\\.greeter \\(\\./greeter\\.mjs\\): GET /users/me: the server at .* rejected the credentials of ${botEmail(0)} .*The running version keeps its old credentials\\.$`,
        ),
      ),
    ]);
    expect(refused?.message).not.toContain(wrongKey);
    // One call asked the server; no bot was stopped, not even the one with a good edit.
    const asked = sandbox.control.requests.slice(before).filter((r) => r.path.endsWith("/users/me"));
    expect(asked).toHaveLength(1);
    const status = await d.daemon.status();
    expect(status.bots.map((b) => [b.name, b.state])).toEqual(NAMES.map((n) => [n, "running"]));
    for (const id of [send(sandbox, "c0"), send(sandbox, "c1")])
      await expect.poll(() => answers(sandbox, id), { timeout: 15_000 }).toEqual(["v1 handled " + id]);
  });
});

describe("a reload whose config names a webhook the bot's module does not declare", () => {
  const declares = 'bot.webhook("deploys", { verify: { type: "none" } }, () => {});';
  /** The config with `webhooks: { deploy: … }` under `bot` (a running bot, or one added with `add`). */
  async function misnamed(d: Awaited<ReturnType<typeof start>>, bot: string, add?: string) {
    let text = await readFile(d.config.file, "utf8");
    if (add)
      text += `  ${bot}:\n    module: ./${bot}.mjs\n    email: ${add}\n    api_key: \${E2E_KEY_ADDED}\n`;
    text = text.replace(
      new RegExp(`(\\n  ${bot}:\\n(?: {4}[^\\n]*\\n)*)`),
      "$1    webhooks:\n      deploy: { idempotency_window: 2d }\n",
    );
    await writeFile(d.config.file, text);
    await writeFile(path.join(d.config.dir, `${bot}.mjs`), moduleText("v2", declares));
    const line = text.split("\n").indexOf("      deploy: { idempotency_window: 2d }") + 1;
    return `^bots\\.${bot} \\(\\./${bot}\\.mjs\\): ${d.config.file.replace(/[.]/g, "\\.")}:${line}:7: bots\\.${bot}\\.webhooks\\.deploy in the config names no webhook of the bot's module \\(it declares deploys\\)\\. Did you mean "deploys"\\? Use the name given to bot\\.webhook\\(\\)\\. \\[BOT_SETUP_INVALID\\]$`;
  }

  it.each([
    ["a running bot's", "greeter", undefined],
    ["an added bot's", "added", botEmail(3)],
  ])(
    "is refused for %s, at the entry's place in the config, with the name meant",
    async (_what, bot, add) => {
      const sandbox = await startE2eSandbox(orgWithBots(4));
      const d = await startReady(sandbox);
      process.env.E2E_KEY_ADDED = sandbox.control.apiKeyOf(botEmail(3));
      const problem = await misnamed(d, bot, add);
      const refused = await refusalOf(d.daemon);
      expect(refused?.code).toBe("RELOAD_REFUSED");
      expect(refused?.message).toMatch(new RegExp(problem));
    },
  );
});
