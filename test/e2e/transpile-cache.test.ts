/**
 * The transpile cache of TypeScript bot modules, with real processes: the first start writes an
 * entry per module file, a reload of an edited module runs the new code (an entry of its new
 * source), and a later `bothost check` loads the modules without loading babel at all. A cache
 * folder that is not the user's own is not used, and an entry that cannot be written is no error.
 */
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { runCli } from "../support/cli.ts";
import {
  botEmail,
  closeAfterTest,
  type E2eConfig,
  orgWithBots,
  send,
  startDaemon,
  startE2eSandbox,
  useE2eCleanup,
  waitForAnswers,
  writeConfig,
} from "../support/e2e-daemon.ts";

useE2eCleanup();

/** A daemon process, a reload and several CLI processes: a loaded 2-core machine needs the time. */
const TIMEOUT = { timeout: 60_000 };

/** Where the cache puts its entries under `$XDG_CACHE_HOME`. */
async function entriesDir(cacheHome: string): Promise<string> {
  const base = path.join(cacheHome, "bothost", "transpiled");
  const [versioned] = await readdir(base);
  return path.join(base, versioned!);
}

async function cacheHome(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-cache-"));
  closeAfterTest(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A config whose bot runs bot.ts, which imports its prefix from prefix.ts. */
async function tsBot(): Promise<{ sandbox: Sandbox; config: E2eConfig; prefixFile: string }> {
  const sandbox = await startE2eSandbox(orgWithBots(1));
  const config = await writeConfig(sandbox, { ts: { email: botEmail(0) } });
  const bot = path.join(config.dir, "bot.ts");
  const prefixFile = path.join(config.dir, "prefix.ts");
  await writeFile(prefixFile, 'export const prefix: string = "task";\n');
  await writeFile(
    bot,
    `import { prefix } from "./prefix.ts";
interface Ctx { event: { message: { id: number; content: string } }; reply(text: string): Promise<unknown>; bot: { name: string } }
export default {
  events: ["message"],
  setup(bot: { on(...args: unknown[]): void }) {
    bot.on("message", (ctx: Ctx) => ctx.event.message.content.startsWith(prefix),
      (ctx: Ctx) => ctx.reply(\`handled \${ctx.event.message.id} by \${ctx.bot.name}\`));
  },
};
`,
  );
  const text = await readFile(config.file, "utf8");
  await writeFile(config.file, text.replace(/module: .*/, `module: ${bot}`));
  return { sandbox, config, prefixFile };
}

describe("the transpile cache", TIMEOUT, () => {
  it("is written at the first start, follows an edited module on reload, and spares a later check babel", async () => {
    const { sandbox, config, prefixFile } = await tsBot();
    const home = await cacheHome();
    const env = { ...config.env, XDG_CACHE_HOME: home };
    const daemon = await startDaemon({ ...config, env });
    const dir = await entriesDir(home);
    for (const folder of [path.join(home, "bothost"), path.dirname(dir), dir]) {
      expect(((await stat(folder)).mode & 0o777).toString(8)).toBe("700");
    }
    const entries = (await readdir(dir)).sort();
    expect(entries).toEqual([expect.stringMatching(/^\w{64}\.js$/), expect.stringMatching(/^\w{64}\.js$/)]);
    const texts = () => Promise.all(entries.map((e) => readFile(path.join(dir, e), "utf8")));
    expect((await texts()).filter((t) => t.includes('"task"'))).toHaveLength(1);

    // The imported file edited: the reload runs the new code, made and kept anew.
    await writeFile(prefixFile, 'export const prefix: string = "job";\n');
    daemon.kill("SIGHUP");
    expect(await daemon.waitForLog((l) => l.msg === "config reloaded")).toMatchObject({ restarted: ["ts"] });
    await waitForAnswers(sandbox, [send(sandbox, "job for the edited bot")]);
    const added = (await readdir(dir)).filter((e) => !entries.includes(e));
    expect(added).toHaveLength(1);
    expect(await readFile(path.join(dir, added[0]!), "utf8")).toContain('"job"');
    entries.push(...added);
    entries.sort();
    daemon.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });

    // Nothing changed since: check takes both modules from the cache and never loads babel.
    const before = await Promise.all(entries.map(async (e) => (await stat(path.join(dir, e))).mtimeMs));
    const check = await runCli(["check", "--config", config.file], { env: { ...env, NODE_DEBUG: "module" } });
    expect(check.code).toBe(0);
    expect(check.stderr).toContain("jiti"); // NODE_DEBUG=module names what is loaded...
    expect(check.stderr).not.toMatch(/babel/); // ...and babel is not among it.
    expect((await readdir(dir)).sort()).toEqual(entries);
    expect(await Promise.all(entries.map(async (e) => (await stat(path.join(dir, e))).mtimeMs))).toEqual(
      before,
    );
  });

  it("is off, silently, when its folder is writable by others or a link elsewhere", async () => {
    const { config } = await tsBot();
    const writable = await cacheHome();
    await mkdir(path.join(writable, "bothost"));
    await chmod(path.join(writable, "bothost"), 0o777);
    const linked = await cacheHome();
    await mkdir(path.join(linked, "elsewhere"));
    await symlink(path.join(linked, "elsewhere"), path.join(linked, "bothost"));
    for (const home of [writable, linked]) {
      const check = await runCli(["check", "--config", config.file], {
        env: { ...config.env, XDG_CACHE_HOME: home },
      });
      expect(check.stderr).toBe("");
      expect(check.code).toBe(0);
      // Nothing made in the folder, nor where the link leads.
      expect(await readdir(path.join(home, "bothost"))).toEqual([]);
    }
  });

  it("loads the module when an entry cannot be read nor written", async () => {
    const { config } = await tsBot();
    const home = await cacheHome();
    const env = { ...config.env, XDG_CACHE_HOME: home };
    expect((await runCli(["check", "--config", config.file], { env })).code).toBe(0);
    const dir = await entriesDir(home);
    // Each entry replaced by a folder holding a file: reading it fails, and so does the rename
    // of the entry made again over it.
    const entries = await readdir(dir);
    for (const entry of entries) {
      await rm(path.join(dir, entry));
      await mkdir(path.join(dir, entry));
      await writeFile(path.join(dir, entry, "x"), "");
    }
    const check = await runCli(["check", "--config", config.file], { env });
    expect(check.stderr).toBe("");
    expect(check.code).toBe(0);
    expect(check.stdout).toContain(botEmail(0));
    // No temporary file is left behind.
    expect((await readdir(dir)).sort()).toEqual(entries.sort());
  });
});
