/**
 * The chat page across a restart of the server under it: a sandbox started again on the same
 * port holds other messages and other keys (as `bothost dev` does after a kill), and the page
 * shows what the new one holds, not what the old one did; a person picked who is no longer
 * there is said so, and the people who are are listed.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { chromiumPath, launchChromium, noChromiumMessage, openChat } from "../support/chromium.ts";

if (!chromiumPath) console.warn(`chat-restart: ${noChromiumMessage}`);

const MEL = "member@sandbox.example";

describe.skipIf(!chromiumPath)("the chat page when the sandbox starts again", () => {
  let sandbox: Sandbox;
  let browser: Browser;
  let page: Page;

  const post = (content: string) =>
    sandbox.control.sendAs(MEL, { type: "channel", to: "general", topic: "restarts", content });
  const shown = () => page.$$eval("#log li .content", (items) => items.map((c) => c.textContent));

  beforeAll(async () => {
    sandbox = await startSandbox({ chatPage: true, heartbeatSeconds: 1 });
    browser = await launchChromium();
    page = await openChat(browser, `${sandbox.url}/chat/`, MEL);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await sandbox?.stop();
  });

  it("shows the new server's messages once it answers, with the person's new key", async () => {
    await post("before the restart");
    await expect.poll(shown).toEqual(["before the restart"]);
    const port = Number(new URL(sandbox.url).port);
    const before = sandbox.control.apiKeyOf(MEL);
    await sandbox.stop();
    sandbox = await startSandbox({ chatPage: true, heartbeatSeconds: 1, port });
    expect(sandbox.control.apiKeyOf(MEL)).not.toBe(before);
    await post("after the restart");
    await expect.poll(shown, { timeout: 15_000 }).toEqual(["after the restart"]);
  });

  it("says so when the person picked is no longer there, and lists the people who are", async () => {
    const port = Number(new URL(sandbox.url).port);
    await sandbox.stop();
    sandbox = await startSandbox({
      chatPage: true,
      heartbeatSeconds: 1,
      port,
      org: {
        users: [{ email: "rae@sandbox.example", full_name: "Rae Requester" }],
        channels: [{ name: "general", subscribers: ["rae@sandbox.example"] }],
      },
    });
    await page.locator("#status", { hasText: `${MEL} is not in the sandbox` }).waitFor({ timeout: 15_000 });
    expect(await shown()).toEqual([]);
    const options = () => page.$$eval("#me option", (o) => o.map((x) => x.getAttribute("value")));
    expect(await options()).toEqual(["rae@sandbox.example"]);
    await page.selectOption("#me", "rae@sandbox.example");
    await page.locator("#status", { hasText: "signed in as rae@sandbox.example" }).waitFor();
  });
});
