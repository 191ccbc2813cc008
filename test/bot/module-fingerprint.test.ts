import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { moduleFingerprint } from "../../src/bot/load-bots.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "bothost-fp-"));
  await mkdir(join(dir, "lib"));
  await writeFile(
    join(dir, "bot.ts"),
    'import { rules } from "./lib/rules.js";\nimport "zod";\nexport default { setup() {} };\n',
  );
  await writeFile(join(dir, "lib/rules.ts"), 'export * from "./words";\nexport const rules = 1;\n');
  await writeFile(join(dir, "lib/words.ts"), "export const words = ['spam'];\n");
  await writeFile(join(dir, "other.ts"), "export const unrelated = 1;\n");
});
afterEach(() => rm(dir, { recursive: true, force: true }));

it("changes when the module or any local file it imports changes, and only then", async () => {
  const bot = join(dir, "bot.ts");
  const first = await moduleFingerprint(bot);
  expect(await moduleFingerprint(bot)).toBe(first);

  await writeFile(join(dir, "other.ts"), "export const unrelated = 2;\n");
  expect(await moduleFingerprint(bot)).toBe(first);

  await writeFile(join(dir, "lib/words.ts"), "export const words = ['spam', 'scam'];\n");
  const second = await moduleFingerprint(bot);
  expect(second).not.toBe(first);

  await writeFile(
    bot,
    'import { rules } from "./lib/rules.js";\nexport default { setup() { void rules; } };\n',
  );
  expect(await moduleFingerprint(bot)).not.toBe(second);
});

it("survives import cycles and imports that name no file", async () => {
  await writeFile(join(dir, "a.ts"), 'import "./b.ts";\nimport "./missing.ts";\n');
  await writeFile(join(dir, "b.ts"), 'import "./a.ts";\n');
  expect(await moduleFingerprint(join(dir, "a.ts"))).toMatch(/^[0-9a-f]{64}$/);
});
