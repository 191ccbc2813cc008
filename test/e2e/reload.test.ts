/**
 * Live reload of `bothost run`: SIGHUP and `bothost reload` apply what changed in the config and
 * leave every other bot's event queue untouched; a broken config is refused and the old one keeps
 * running and answering.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.ts";
import {
  botEmail,
  expectExactlyOnce,
  expectNoSecrets,
  orgWithBots,
  REPLIER,
  send,
  startDaemon,
  startE2eSandbox,
  useE2eCleanup,
  waitForAnswers,
  writeConfig,
} from "../support/e2e-daemon.ts";
import { freePort } from "../support/free-port.ts";

useE2eCleanup();

const WRONG_KEY = "WrongKey0123456789abcdefWrongKey";

/** The config's bot block for bot i, its key from `variable`. */
const botBlock = (name: string, i: number, variable: string) =>
  `  ${name}:\n    module: ${REPLIER}\n    email: ${botEmail(i)}\n    api_key: \${${variable}}\n`;

const queueOf = (sandbox: Awaited<ReturnType<typeof startE2eSandbox>>, email: string) =>
  sandbox.control.queues().find((q) => q.email === email)?.queue_id;

/**
 * Each case starts a daemon process and reloads it, and the last runs three CLI processes too: on
 * a loaded 2-core machine they take 10 to 20 s and more, which vitest's default 20 s does not cover.
 */
const TIMEOUT = { timeout: 60_000 };

describe("SIGHUP", TIMEOUT, () => {
  it("starts an added bot, stops a removed one (its queue deleted), refuses a broken config; the others keep their queue", async () => {
    const sandbox = await startE2eSandbox(orgWithBots(2));
    const config = await writeConfig(sandbox, { first: { email: botEmail(0) } });
    const env = { ...config.env, E2E_KEY_SECOND: sandbox.control.apiKeyOf(botEmail(1)) };
    const daemon = await startDaemon({ ...config, env });
    const firstQueue = queueOf(sandbox, botEmail(0));
    expect(firstQueue).toBeDefined();
    const original = await readFile(config.file, "utf8");

    // Add a bot.
    await writeFile(config.file, original + botBlock("second", 1, "E2E_KEY_SECOND"));
    daemon.kill("SIGHUP");
    const added = await daemon.waitForLog((l) => l.msg === "config reloaded");
    expect(added).toMatchObject({ added: ["second"], removed: [], restarted: [] });
    const ids = [send(sandbox, "task for the new bot", "c1"), send(sandbox, "task for the first bot", "c0")];
    await waitForAnswers(sandbox, ids);
    expectExactlyOnce(sandbox, ids);
    expect(queueOf(sandbox, botEmail(0))).toBe(firstQueue);

    // A broken config: refused, located, every bot goes on.
    await writeFile(config.file, `${original}${botBlock("second", 1, "E2E_KEY_SECOND")}  third: [unclosed\n`);
    daemon.kill("SIGHUP");
    const refused = await daemon.waitForLog((l) => String(l.msg).startsWith("reload refused"));
    expect(refused.level).toBe(50);
    expect(String(refused.problems)).toMatch(
      new RegExp(`${config.file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:\\d+:\\d+`),
    );
    const during = [send(sandbox, "task: still there?", "c1"), send(sandbox, "task: and you?", "c0")];
    await waitForAnswers(sandbox, during);
    expect(queueOf(sandbox, botEmail(0))).toBe(firstQueue);

    // Remove the added bot: its queue goes, the first bot keeps its own.
    const secondQueue = queueOf(sandbox, botEmail(1));
    await writeFile(config.file, original);
    daemon.kill("SIGHUP");
    await expect.poll(() => daemon.logs().filter((l) => l.msg === "config reloaded").length).toBe(2);
    expect(daemon.logs().filter((l) => l.msg === "config reloaded")[1]).toMatchObject({
      removed: ["second"],
    });
    await expect.poll(() => queueOf(sandbox, botEmail(1))).toBeUndefined();
    expect(secondQueue).toBeDefined();
    expect(queueOf(sandbox, botEmail(0))).toBe(firstQueue);
    const after = [send(sandbox, "task after removal", "c0")];
    await waitForAnswers(sandbox, after);

    daemon.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    expectNoSecrets(daemon, config.secrets);
  });
});

describe("an edited module", TIMEOUT, () => {
  it("restarts only the bot whose module changed, which then runs the new code", async () => {
    const sandbox = await startE2eSandbox(orgWithBots(2));
    const config = await writeConfig(sandbox, {
      stable: { email: botEmail(0) },
      edited: { email: botEmail(1) },
    });
    const module = path.join(config.dir, "edited.mjs");
    // A replier of its own (no imports, so it loads from a temporary folder).
    await writeFile(
      module,
      `export default { events: ["message"], setup(bot) {
        bot.on("message", (ctx) => ctx.event.message.content.startsWith("task"),
          (ctx) => ctx.reply(\`handled \${ctx.event.message.id} by \${ctx.bot.name} pid \${process.pid}\`));
      } };\n`,
    );
    const text = await readFile(config.file, "utf8");
    await writeFile(
      config.file,
      text.replace(
        `module: ${REPLIER}\n    email: ${botEmail(1)}`,
        `module: ${module}\n    email: ${botEmail(1)}`,
      ),
    );
    const daemon = await startDaemon(config);
    const stableQueue = queueOf(sandbox, botEmail(0));

    await writeFile(
      module,
      (await readFile(module, "utf8")).replace('startsWith("task")', 'startsWith("job")'),
    );
    daemon.kill("SIGHUP");
    const reloaded = await daemon.waitForLog((l) => l.msg === "config reloaded");
    expect(reloaded).toMatchObject({ restarted: ["edited"], added: [], removed: [] });
    const ids = [
      send(sandbox, "job for the edited bot", "c1"),
      send(sandbox, "task for the stable bot", "c0"),
    ];
    await waitForAnswers(sandbox, ids);
    expectExactlyOnce(sandbox, ids);
    expect(queueOf(sandbox, botEmail(0))).toBe(stableQueue);
    daemon.kill("SIGTERM");
    await daemon.exited;
  });
});

describe("bothost reload", TIMEOUT, () => {
  it("brings back a bot whose key was fixed, prints what changed, and refuses a broken config with exit 2", async () => {
    const sandbox = await startE2eSandbox(orgWithBots(2));
    const port = await freePort();
    const config = await writeConfig(
      sandbox,
      { good: { email: botEmail(0) }, rotated: { email: botEmail(1), apiKey: WRONG_KEY } },
      { global: `http:\n  listen: 127.0.0.1:${port}` },
    );
    const daemon = await startDaemon(config);
    const goodQueue = queueOf(sandbox, botEmail(0));
    const status = JSON.parse(
      (await runCli(["status", "--json", "-c", config.file], { env: config.env })).stdout,
    );
    expect(status.bots.find((b: { name: string }) => b.name === "rotated")).toMatchObject({
      state: "failed",
    });

    // The key is rotated in the environment the config reads: here, the file names the new key.
    const fixed = (await readFile(config.file, "utf8")).replace(
      `api_key: \${E2E_KEY_ROTATED}`,
      `api_key: ${sandbox.control.apiKeyOf(botEmail(1))}`,
    );
    await writeFile(config.file, fixed);
    const reload = await runCli(["reload", "-c", config.file], { env: config.env });
    expect(reload.stderr).toBe("");
    expect(reload).toMatchObject({ code: 0 });
    expect(reload.stdout).toBe("Restarted: rotated\nUnchanged: 1 bot\n");
    const ids = [send(sandbox, "task for rotated", "c1")];
    await waitForAnswers(sandbox, ids);
    expect(queueOf(sandbox, botEmail(0))).toBe(goodQueue);

    await writeFile(config.file, fixed.replace("shutdown_timeout: 5s", "shutdown_timeout: soon"));
    const refused = await runCli(["reload", "-c", config.file], { env: config.env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/shutdown_timeout/);
    expect(refused.stderr).toMatch(/bothost\.yaml:\d+:\d+/);
    expect(daemon.child.exitCode).toBeNull();
    daemon.kill("SIGTERM");
    await daemon.exited;
  });
});
