/**
 * The problems `bothost check` would report for a config given as text: written to a temp file,
 * loaded with its bots (modules and settings), the `ConfigError`'s problems returned. Fails the
 * test when the config loads.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { loadBots } from "../../src/bot/load-bots.ts";
import { ConfigError } from "../../src/config/config-error.ts";
import type { ConfigProblem } from "../../src/config/config-problem.ts";
import { loadConfigWithSource } from "../../src/config/load-config.ts";

export async function problemsLoading(yaml: string): Promise<readonly ConfigProblem[]> {
  const dir = await mkdtemp(join(tmpdir(), "bothost-problems-"));
  try {
    const file = join(dir, "bothost.yaml");
    await writeFile(file, yaml);
    const { config, source } = await loadConfigWithSource(file);
    const error = await loadBots(config, source).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
