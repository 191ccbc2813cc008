/**
 * Bots of an e2e config (test/support/e2e-daemon.ts) given their own module files, so that a test
 * can edit one bot's module and reload.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { type E2eConfig, MEMBER } from "../support/e2e-daemon.ts";

/**
 * Write `modules[name]` to `<name>.mjs` in the config's folder and point bot `name` at it, for
 * each name; resolves the path of a bot's module file by name.
 */
export async function useModuleFiles(
  config: E2eConfig,
  modules: Record<string, string>,
): Promise<(name: string) => string> {
  const file = (name: string) => path.join(config.dir, `${name}.mjs`);
  let text = await readFile(config.file, "utf8");
  for (const [name, source] of Object.entries(modules)) {
    await writeFile(file(name), source);
    text = text.replace(/module: .*\n(\s+email: [^\n]*\n\s+api_key: \$\{E2E_KEY_(\w+)\})/g, (all, rest, v) =>
      v === name.toUpperCase() ? `module: ./${name}.mjs\n${rest}` : all,
    );
  }
  await writeFile(config.file, text);
  return file;
}

/** A bot module answering "task…" messages with "<tag> handled <id>"; `extra` goes into its setup. */
export const moduleText = (tag: string, extra = "") =>
  `export default { events: ["message"], setup(bot) {
  ${extra}
  bot.on("message", (ctx) => ctx.event.message.content.startsWith("task"),
    (ctx) => ctx.reply("${tag} handled " + ctx.event.message.id));
} };\n`;

/** The answers of such modules to message `id`. */
export const answers = (sandbox: Sandbox, id: number) =>
  sandbox.control
    .messages()
    .map((m) => String(m.content))
    .filter((c) => c.endsWith(` handled ${id}`));

/** Post "task" as a member in `channel`; resolves its message id. */
export const send = (sandbox: Sandbox, channel: string) =>
  sandbox.control.sendAs(MEMBER, { type: "stream", to: channel, topic: "t", content: "task" }).id;
