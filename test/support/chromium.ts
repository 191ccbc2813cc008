/**
 * Debian's chromium, driven by playwright-core (no browser is downloaded). `.ci/run` installs the
 * package; without it the browser tests skip and say so.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import type { Sandbox } from "../../src/sandbox/types.ts";

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

/** A new tab on a sandbox's chat page (`url` ends in `/chat/`), signed in as `email`. */
export async function openChat(browser: Browser, url: string, email: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(url);
  await signInChat(page, email);
  return page;
}

/** Picks `email` on a chat page, once it is ready, and waits until the page is theirs. */
export async function signInChat(page: Page, email: string): Promise<void> {
  await page.waitForSelector("body[data-ready=true]");
  await page.selectOption("#me", email);
  await page.locator("#status", { hasText: email }).waitFor();
}

/** `method route` of the sandbox's API as `email` (a query for GET, a form otherwise): its JSON. */
export async function callAs(
  sandbox: Sandbox,
  email: string,
  method: string,
  route: string,
  params: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  const key = sandbox.control.apiKeyOf(email);
  const form = new URLSearchParams(params);
  const response = await fetch(`${sandbox.url}/api/v1${route}${method === "GET" ? `?${form}` : ""}`, {
    method,
    headers: { authorization: `Basic ${Buffer.from(`${email}:${key}`).toString("base64")}` },
    ...(method === "GET" ? {} : { body: form }),
  });
  return (await response.json()) as Record<string, unknown>;
}
