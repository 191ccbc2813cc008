/**
 * `bothost dev` as a newcomer meets it: a project made by `bothost init`, the built CLI running
 * `dev` in it, and the chat page in Chromium. A message posted on the page gets the hello bot's
 * reply on the page; message text is shown as text; an edit to the bot's file is live after a
 * reload, and a broken edit leaves the bot answering as before.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumPath, launchChromium, noChromiumMessage } from "../support/chromium.ts";
import { assertBuilt, type CliProcess, repoRoot, runCli, spawnCli } from "../support/cli.ts";
import { initProject } from "../support/init-project.ts";

if (!chromiumPath) console.warn(`dev-chat: ${noChromiumMessage}`);

describe.skipIf(!chromiumPath)("bothost dev's chat page in chromium", () => {
  let dir: string;
  let project: string;
  let dev: CliProcess;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    ({ dir, project } = await initProject("dev"));
    dev = spawnCli(["dev"], { cwd: project });
    for (let waited = 0; !dev.stdout().includes("/chat/"); waited += 100) {
      if (waited > 30_000) throw new Error(`bothost dev did not start:\n${dev.stdout()}\n${dev.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const url = /Chat with your bots: (\S+)/.exec(dev.stdout())![1]!;
    browser = await launchChromium();
    page = await browser.newPage();
    await page.goto(url);
    await page.waitForSelector("body[data-ready=true]");
    await page.selectOption("#me", "member@sandbox.example");
    await page.locator("#status", { hasText: "member@sandbox.example" }).waitFor();
    await page.selectOption("#to", { label: "DM Hello Bot (bot)" });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    dev?.kill("SIGINT");
    await dev?.exited;
    await rm(dir, { recursive: true, force: true });
  });

  const say = async (text: string) => {
    await page.fill("#content", text);
    await page.click("button[type=submit]");
  };
  const replies = () =>
    page.$$eval("#log li", (items) =>
      items
        .filter((li) => li.querySelector(".sender")?.textContent === "Hello Bot")
        .map((li) => li.querySelector(".content")?.textContent ?? ""),
    );

  it("a message posted on the page gets the hello bot's reply on the page", async () => {
    await say("hello");
    await expect.poll(replies, { timeout: 10_000 }).toEqual(["Hello, Mel Member!"]);
    const mine = await page.$$eval("#log li .content", (c) => c.map((x) => x.textContent));
    expect(mine).toContain("hello");
  });

  it("shows message text as text, never as HTML", async () => {
    await say('<img src=x onerror="document.body.dataset.owned=1"> <b>bold</b>');
    await page.locator("#log .content", { hasText: "<b>bold</b>" }).waitFor();
    expect(await page.$$eval("#log img, #log b", (found) => found.length)).toBe(0);
    expect(await page.getAttribute("body", "data-owned")).toBeNull();
  });

  it("shows an edit, a move and a deletion as they happen", async () => {
    const origin = new URL(page.url()).origin;
    const session = (await (await fetch(`${origin}/chat/session?email=member@sandbox.example`)).json()) as {
      email: string;
      api_key: string;
    };
    const authorization = `Basic ${Buffer.from(`${session.email}:${session.api_key}`).toString("base64")}`;
    const call = async (method: string, route: string, params: Record<string, string> = {}) =>
      (await (
        await fetch(`${origin}/api/v1${route}`, {
          method,
          headers: { authorization, "content-type": "application/x-www-form-urlencoded" },
          ...(method === "GET" ? {} : { body: new URLSearchParams(params) }),
        })
      ).json()) as Record<string, unknown>;
    const [channel] = (await call("GET", "/users/me/subscriptions")).subscriptions as { name: string }[];
    const sent = await call("POST", "/messages", {
      type: "channel",
      to: channel!.name,
      topic: "plans",
      content: "draft one",
    });
    const item = page.locator(`#log li[data-id="${sent.id}"]`);
    await item.locator(".content", { hasText: "draft one" }).waitFor();

    expect(await call("PATCH", `/messages/${sent.id}`, { content: "draft two" })).toMatchObject({
      result: "success",
    });
    await item.locator(".content", { hasText: "draft two" }).waitFor();
    expect(await call("PATCH", `/messages/${sent.id}`, { topic: "decisions" })).toMatchObject({
      result: "success",
    });
    await item.locator(".where", { hasText: `#${channel!.name} › decisions` }).waitFor();
    expect(await call("DELETE", `/messages/${sent.id}`)).toMatchObject({ result: "success" });
    await expect.poll(() => item.count(), { timeout: 10_000 }).toBe(0);
  });

  it("an edit to the bot's file is live after the reload; a broken edit keeps the bot as it was", async () => {
    const file = path.join(project, "bots", "hello.ts");
    const source = await readFile(file, "utf8");
    await writeFile(file, source.replace('const greeting = "Hello";', 'const greeting = "Howdy";'));
    await expect.poll(() => dev.stdout(), { timeout: 10_000 }).toMatch(/"msg":"config reloaded"|reloaded/);
    await say("hello");
    await expect.poll(replies, { timeout: 10_000 }).toContain("Howdy, Mel Member!");

    const before = dev.stdout().length;
    await writeFile(
      file,
      `${source.replace('const greeting = "Hello";', 'const greeting = "Howdy";')}\nexport const = ;\n`,
    );
    await expect
      .poll(() => dev.stdout().slice(before) + dev.stderr(), { timeout: 10_000 })
      .toContain("hello.ts");
    await say("HELLO");
    await expect
      .poll(async () => (await replies()).filter((r) => r === "Howdy, Mel Member!").length, {
        timeout: 10_000,
      })
      .toBe(2);
  });
});

describe("bothost dev without the sandbox", () => {
  it("refuses a config for a real server with exit code 2 and says why", async () => {
    assertBuilt();
    const dir = await mkdtemp(path.join(tmpdir(), "bothost-dev-real-"));
    try {
      const file = path.join(dir, "bothost.yaml");
      await writeFile(
        file,
        "server:\n  url: http://127.0.0.1:9\nbots:\n  echo:\n" +
          `    module: ${path.join(repoRoot, "bots/echo.ts")}\n    email: echo-bot@example.org\n    api_key: key-0123456789\n`,
      );
      const { code, stderr } = await runCli(["dev", "-c", file]);
      expect(code).toBe(2);
      expect(stderr).toContain("set server.url: sandbox");
      const unknown = await runCli(["dev", "--wat"]);
      expect(unknown.code).toBe(2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
