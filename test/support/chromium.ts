/**
 * Debian's chromium, driven by playwright-core (no browser is downloaded). `.ci/run` installs the
 * package; without it the browser tests skip and say so.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { type Browser, chromium } from "playwright-core";

/** `CHROMIUM_PATH` when set, else the first `chromium` or `chromium-browser` on PATH. */
function findChromium(): string | undefined {
  const given = process.env.CHROMIUM_PATH;
  if (given) return existsSync(given) ? given : undefined;
  const dirs = (process.env.PATH ?? "").split(path.delimiter).filter(Boolean);
  for (const name of ["chromium", "chromium-browser"]) {
    const found = dirs.map((dir) => path.join(dir, name)).find((file) => existsSync(file));
    if (found) return found;
  }
  return undefined;
}

/** The chromium executable, or undefined when none is installed. */
export const chromiumPath: string | undefined = findChromium();

export const noChromiumMessage = process.env.CHROMIUM_PATH
  ? `no chromium at CHROMIUM_PATH=${process.env.CHROMIUM_PATH}: browser tests skipped`
  : "no chromium on PATH (apt-get install chromium, or set CHROMIUM_PATH): browser tests skipped";

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath!, headless: true, args: ["--no-sandbox"] });
}
