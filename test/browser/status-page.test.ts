/**
 * The /status page in a real browser: what an operator sees of a running daemon (bot names,
 * states, a failure appearing after one happens, a dialog waiting for an answer), on a desktop
 * and on a phone-sized screen.
 * A screenshot of each is saved under test-results/.
 */
import { mkdir } from "node:fs/promises";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { type InProcessDaemon, startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { chromiumPath, launchChromium, noChromiumMessage } from "../support/chromium.ts";
import { freePort } from "../support/free-port.ts";

if (!chromiumPath) console.warn(`status-page: ${noChromiumMessage}`);

describe.skipIf(!chromiumPath)("the /status page in chromium", () => {
  let sandbox: Sandbox;
  let running: InProcessDaemon;
  let browser: Browser;
  let url: string;

  beforeAll(async () => {
    sandbox = await startSandbox();
    for (const email of ["greeter-bot@sandbox.example", "locked-bot@sandbox.example"]) {
      sandbox.control.createUser({ email, full_name: email, bot: "generic", owner: "owner@sandbox.example" });
    }
    const port = await freePort();
    const quiet = defineBot({ setup: () => {} });
    const greeter = defineBot({
      setup(bot) {
        bot.command("name", async (ctx) => {
          const name = await ctx.prompt("What is your <name>?", { timeout: "1d" });
          await ctx.reply(`Hello, ${name.text}`);
        });
      },
    });
    running = await startInProcessDaemon(
      sandbox,
      {
        greeter: { email: "greeter-bot@sandbox.example", definition: greeter },
        locked: { email: "locked-bot@sandbox.example", apiKey: "not-the-key-0123456789", definition: quiet },
      },
      { global: `http:\n  listen: 127.0.0.1:${port}` },
    );
    url = `http://127.0.0.1:${port}/status`;
    browser = await launchChromium();
    await mkdir("test-results", { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await running?.stop();
    await sandbox?.stop();
  });

  it("shows each bot with its state, the reason of a failed one, and a failure once it happens", async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    await page.goto(url);
    expect(await page.title()).toBe("(1) bothost status");
    const greeter = page.locator('[data-bot="greeter"]');
    const locked = page.locator('[data-bot="locked"]');
    expect(await greeter.locator(".state").innerText()).toBe("running");
    expect(await locked.locator(".state").innerText()).toBe("failed");
    expect(await locked.innerText()).toContain("the server rejected the bot's credentials");
    expect(await page.locator("body").innerText()).toContain("No dead letters.");
    expect(await page.content()).not.toContain("not-the-key-0123456789");

    await running.daemon.letters.of("greeter").add({
      source: "queue",
      event: { type: "message", id: 7 },
      error: new Error("greeting <b>failed</b>"),
      attempts: 5,
      firstFailedAt: new Date().toISOString(),
      lastFailedAt: new Date().toISOString(),
    });
    await page.reload();
    const row = page.locator("table tbody tr");
    expect(await row.count()).toBe(1);
    expect(await row.innerText()).toContain("greeter/1");
    expect(await row.innerText()).toContain("Error: greeting <b>failed</b>");
    expect(await greeter.innerText()).toMatch(/dead letters\s+1/);
    await page.screenshot({ path: "test-results/status-page-desktop.png", fullPage: true });
    await page.close();
  });

  it("lists a dialog waiting for an answer on its bot's card", { timeout: 90_000 }, async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    const greeter = page.locator('[data-bot="greeter"]');
    await page.goto(url);
    expect(await greeter.locator("ol.dialogs").count()).toBe(0);
    const asked = sandbox.control.sendAs("member@sandbox.example", {
      type: "direct",
      to: ["greeter-bot@sandbox.example"],
      content: "name",
    });
    const greeterRuntime = running.daemon.bots.find((b) => b.name === "greeter")!;
    await vi.waitFor(() => expect(greeterRuntime.dialogs()[0]?.deadline).toBeDefined(), { timeout: 60_000 });
    await page.reload();
    const dialog = greeter.locator(`ol.dialogs li[data-dialog="${asked.id}"]`);
    const member = sandbox.control.users().find((u) => u.email === "member@sandbox.example")!;
    expect(await dialog.innerText()).toMatch(
      new RegExp(`^${member.full_name}, direct message, step 1, since \\S+Z, deadline \\S+Z$`),
    );
    expect(await greeter.innerText()).toMatch(/dialogs\s+1 open/);
    await page.screenshot({ path: "test-results/status-page-dialog.png", fullPage: true });
    await page.close();
  });

  it("stacks the bots in one column on a phone, with nothing wider than the screen", async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
    await page.goto(url);
    const boxes = await page
      .locator(".bot")
      .evaluateAll((cards) => cards.map((c) => c.getBoundingClientRect().x));
    expect(new Set(boxes).size).toBe(1);
    const overflow = await page.evaluate(() => {
      // Runs in the page; the project's types have no DOM.
      const g = globalThis as unknown as {
        document: { documentElement: { scrollWidth: number } };
        innerWidth: number;
      };
      return g.document.documentElement.scrollWidth - g.innerWidth;
    });
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: "test-results/status-page-phone.png", fullPage: true });
    await page.close();
  });

  it("refreshes itself", async () => {
    const page = await browser.newPage();
    await page.goto(url);
    expect(await page.locator('meta[http-equiv="refresh"]').getAttribute("content")).toBe("5");
    await page.close();
  });
});
