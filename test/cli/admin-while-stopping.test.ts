/**
 * The admin commands while a real `bothost run` drains its handlers after SIGTERM: its admin
 * socket is closed by then, yet a daemon of this config runs. `status` and `reload` say the daemon
 * is stopping, with its pid (`DAEMON_STOPPING`, exit 1; no SIGHUP sent), not that none answers; so
 * do `failed list` and `dialogs` on the file store, whose directory the stopping daemon holds, while
 * on Redis they read the store directly. Once it has stopped, nothing says it is stopping.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, spawnCli } from "../support/cli.ts";
import { crashBackends } from "../support/crash-backends.ts";
import { botEmail, orgWithBots, send, startE2eSandbox, useE2eCleanup } from "../support/e2e-daemon.ts";

useE2eCleanup();

const backends = await crashBackends("admin-while-stopping");

/** A bot whose message handler says it began, then runs while the file `hold` exists. */
const heldBot = (dir: string) => `import { existsSync, writeFileSync } from "node:fs";
export default { events: ["message"], setup(bot) {
  bot.on("message", async () => {
    writeFileSync(${JSON.stringify(path.join(dir, "began"))}, "");
    while (existsSync(${JSON.stringify(path.join(dir, "hold"))})) await new Promise((r) => setTimeout(r, 50));
  });
} };
`;

describe.each(backends)("on the %s", (name, backendFor) => {
  it("status, reload, failed and dialogs during the drain", { timeout: 90_000 }, async () => {
    const sandbox = await startE2eSandbox(orgWithBots(1));
    const dir = await mkdtemp(path.join(tmpdir(), "bothost-stopping-"));
    await writeFile(path.join(dir, "bot.mjs"), heldBot(dir));
    await writeFile(path.join(dir, "hold"), "");
    const file = path.join(dir, "bothost.yaml");
    const yaml = [
      `server:\n  url: ${sandbox.url}`,
      backendFor(dir).yaml,
      "log:\n  level: info\n  pretty: false",
      "shutdown_timeout: 60s",
      "longpoll_margin: 1s",
      "bots:",
      `  b:\n    module: ./bot.mjs\n    email: ${botEmail(0)}\n    api_key: \${E2E_KEY}`,
    ];
    await writeFile(file, `${yaml.join("\n")}\n`);
    const env = { E2E_KEY: sandbox.control.apiKeyOf(botEmail(0)) };
    const cli = (...args: string[]) => runCli([...args, "--config", file], { env });
    try {
      const daemon = spawnCli(["run", "--config", file], { env });
      await daemon.waitForLog((l) => l.msg === "daemon started", 20_000);
      send(sandbox, "hello");
      await expect.poll(() => existsSync(path.join(dir, "began")), { timeout: 15_000 }).toBe(true);
      daemon.kill("SIGTERM");
      await daemon.waitForLog((l) => l.msg === "shutting down", 10_000);

      const stopping = `the daemon (pid ${daemon.pid}) is stopping`;
      // The socket goes as the stop begins: asked again until it is gone.
      await expect
        .poll(async () => (await cli("status")).stderr, { timeout: 15_000, interval: 200 })
        .toContain(`${stopping}: its admin socket`);
      const status = await cli("status");
      expect(status.code).toBe(1);
      expect(status.stderr).toMatch(/Run the command again once it has stopped\. \[DAEMON_STOPPING\]\n$/);

      const reload = await cli("reload");
      expect(reload).toMatchObject({ code: 1, stdout: "" });
      expect(reload.stderr).toContain(stopping);

      const failed = await cli("failed", "list");
      const dialogs = await cli("dialogs");
      if (name === "Redis") {
        // No directory held: the store itself answers, as with no daemon.
        expect(failed.code).toBe(0);
        expect(dialogs.code).toBe(0);
        expect(dialogs.stderr).toContain(
          "No daemon answers: the open dialogs as the state store keeps them.",
        );
      } else {
        for (const r of [failed, dialogs]) {
          expect(r.code).toBe(1);
          expect(r.stderr).toContain(`${stopping}: its admin socket`);
        }
      }

      await rm(path.join(dir, "hold"));
      expect((await daemon.exited).code).toBe(0);
      // No reload was asked of the stopping daemon: no SIGHUP reached it.
      expect(daemon.logs().some((l) => String(l.msg).startsWith("reload refused"))).toBe(false);
      const after = await cli("status");
      expect(after.code).toBe(1);
      expect(after.stderr).toContain("[DAEMON_UNREACHABLE]");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
