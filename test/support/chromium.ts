/**
 * Debian's chromium, driven by playwright-core (no browser is downloaded). `.ci/run` installs the
 * package; without it the browser tests skip and say so.
 */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

const CANDIDATES = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"];

/** The chromium executable, or undefined when none is installed. */
export const chromiumPath: string | undefined = CANDIDATES.find((p): p is string => !!p && existsSync(p));

export const noChromiumMessage =
  "no chromium at /usr/bin/chromium (apt-get install chromium, or set CHROMIUM_PATH): browser tests skipped";

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath!, headless: true, args: ["--no-sandbox"] });
}
