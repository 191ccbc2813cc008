/**
 * The chat page shows a message as the server renders it (a bot's list, its bold text, a table,
 * a mention, an emoji as its glyph), rebuilt through an allow-list: text that looks like HTML
 * stays text, a link keeps only an http(s) address. An edit shows the new rendering, and the
 * page's edit starts from the text as written. A spoiler stays closed until its header is clicked;
 * a /me message follows its sender's name; a time shows in the reader's zone; a code block, its
 * language; a channel or topic link, as a link.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import {
  callAs,
  chromiumPath,
  launchChromium,
  noChromiumMessage,
  openChat,
  signInChat,
} from "../support/chromium.ts";

if (!chromiumPath) console.warn(`chat-rendered: ${noChromiumMessage}`);

const MEL = "member@sandbox.example";
const OLIVE = "owner@sandbox.example";

describe.skipIf(!chromiumPath)("messages rendered on the chat page", () => {
  let sandbox: Sandbox;
  let browser: Browser;
  let page: Page;

  const call = (email: string, method: string, route: string, params?: Record<string, string>) =>
    callAs(sandbox, email, method, route, params);
  const send = async (content: string) => {
    const sent = await call(OLIVE, "POST", "/messages", {
      type: "channel",
      to: "general",
      topic: "t",
      content,
    });
    expect(sent).toMatchObject({ result: "success" });
    const item = page.locator(`#log li[data-id="${sent.id}"] .content`);
    await item.waitFor();
    return { id: sent.id as number, item };
  };

  beforeAll(async () => {
    sandbox = await startSandbox({ chatPage: true, heartbeatSeconds: 1 });
    browser = await launchChromium();
    page = await openChat(browser, `${sandbox.url}/chat/`, MEL);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await sandbox?.stop();
  });

  it("shows lists, bold text, tables, mentions and emoji as the web app does", async () => {
    const { item } = await send(
      "**Standup** :tada:\n- @**Mel Member** done\n- ~~blocked~~\n\n| who | hours |\n| --- | --: |\n| ann | 3 |",
    );
    expect(await item.locator("strong").first().textContent()).toBe("Standup");
    expect(await item.locator("li").allTextContents()).toEqual(["@Mel Member done", "blocked"]);
    expect(await item.locator("li .user-mention").textContent()).toBe("@Mel Member");
    expect(await item.locator("del").textContent()).toBe("blocked");
    expect(await item.locator(".emoji").textContent()).toBe("🎉");
    expect(await item.locator(".emoji").getAttribute("title")).toBe("tada");
    expect(await item.locator("td").allTextContents()).toEqual(["ann", "3"]);
    // A list in a message is drawn as a list, not as rows of the page's log.
    const itemBorders = await item
      .locator("li")
      .evaluateAll((lis) =>
        lis.map(
          (li) =>
            (
              globalThis as unknown as { getComputedStyle(e: unknown): { borderBottomStyle: string } }
            ).getComputedStyle(li).borderBottomStyle,
        ),
      );
    expect(itemBorders).toEqual(["none", "none"]);
    expect(
      await item
        .locator("td")
        .nth(1)
        .evaluate((td) => (td as unknown as { style: { textAlign: string } }).style.textAlign),
    ).toBe("right");
  });

  it("keeps text that looks like HTML as text, and no link but an http(s) one", async () => {
    const { item } = await send(
      '<img src=x onerror="document.body.dataset.hit=1"> [a](javascript:document.body.dataset.hit=2) [c](tel:+15550100) [b](https://example.org/b)',
    );
    expect(await item.locator("img").count()).toBe(0);
    expect(await item.textContent()).toContain('<img src=x onerror="document.body.dataset.hit=1">');
    // The server (and so the sandbox) leaves a javascript: link as text; a link of another scheme
    // it allows (tel:) comes as a link, which the page shows without its address.
    expect(await item.textContent()).toContain("[a](javascript:document.body.dataset.hit=2)");
    const links = await item
      .locator("a")
      .evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute("href"), a.getAttribute("target")]));
    expect(links).toEqual([
      ["c", null, null],
      ["b", "https://example.org/b", "_blank"],
    ]);
    expect(await page.locator("body").getAttribute("data-hit")).toBeNull();
  });

  it("shows an edit's new rendering; the page's edit starts from the text as written", async () => {
    const { id, item } = await call(MEL, "POST", "/messages", {
      type: "channel",
      to: "general",
      topic: "t",
      content: "**draft**",
    }).then(async (sent) => {
      const locator = page.locator(`#log li[data-id="${sent.id}"] .content`);
      await locator.waitFor();
      return { id: sent.id as number, item: locator };
    });
    const asked: string[] = [];
    page.once("dialog", (dialog) => {
      asked.push(dialog.defaultValue());
      void dialog.accept("*final* :check:");
    });
    await page.locator(`#log li[data-id="${id}"] button[data-action="edit"]`).click();
    await expect.poll(() => item.locator("em").count()).toBe(1);
    expect(asked).toEqual(["**draft**"]);
    expect(await item.textContent()).toBe("final ✅");
  });

  it("keeps a spoiler's content closed until its header is clicked, as the web app does", async () => {
    const { item } = await send(
      "```spoiler Original message\nthe **secret**\n```\n```spoiler\nno header\n```",
    );
    const [first, second] = [item.locator(".spoiler-block").first(), item.locator(".spoiler-block").nth(1)];
    expect((await first.locator(".spoiler-header").textContent())?.trim()).toBe("Original message");
    expect((await second.locator(".spoiler-header").textContent())?.trim()).toBe("Spoiler");
    expect(await first.locator(".spoiler-content").isVisible()).toBe(false);
    await first.locator(".spoiler-header").click();
    await first.locator(".spoiler-content strong", { hasText: "secret" }).waitFor({ state: "visible" });
    expect(await second.locator(".spoiler-content").isVisible()).toBe(false);
  });

  it("shows a /me message after its sender's name, as the web app does", async () => {
    const { id, item } = await send("/me is **away**");
    expect(await item.textContent()).toBe("is away");
    // On the sender's line, as the web app shows it.
    const sender = await page.locator(`#log li[data-id="${id}"] .sender`).boundingBox();
    const text = await item.locator("strong").boundingBox();
    expect(Math.abs(sender!.y - text!.y)).toBeLessThan(3);
    expect(text!.x).toBeGreaterThan(sender!.x + sender!.width);
  });

  it("shows a time in the reader's zone and language, the time as written in its title", async () => {
    const berlin = await (
      await browser.newContext({ locale: "en-US", timezoneId: "Europe/Berlin" })
    ).newPage();
    await berlin.goto(`${sandbox.url}/chat/`);
    await signInChat(berlin, MEL);
    const { id } = await send("at <time:2026-12-07T12:00:00Z>");
    const time = berlin.locator(`#log li[data-id="${id}"] .content time`);
    await time.waitFor();
    expect(await time.textContent()).toBe("Mon, Dec 7, 2026, 1:00 PM");
    expect(await time.getAttribute("title")).toBe("2026-12-07T12:00:00Z");
    await berlin.context().close();
  });

  it("shows a code block's language above it, as text", async () => {
    const { item } = await send(
      '```ts\nconst x = 1;\n```\n```<img src=x onerror="document.body.dataset.hit=3">\nx\n```\ny\n```',
    );
    const labels = await item.locator(".codehilite").evaluateAll((blocks) => {
      const view = globalThis as unknown as { getComputedStyle(e: unknown, p: string): { content: string } };
      return blocks.map((b) => view.getComputedStyle(b, "::before").content);
    });
    // A language is letters, digits and `_+,-./#` for the server: the `<img` line opens no block
    // but is text, escaped, and the fence after it opens one with no language. Nothing of it runs.
    expect(labels).toEqual(['"TypeScript"', "none"]);
    expect(await item.locator("img").count()).toBe(0);
    expect(await page.locator("body").getAttribute("data-hit")).toBeNull();
  });

  it("shows channel and topic links as links, though they lead nowhere on the page", async () => {
    const { item } = await send("in #**general>t** and #**general**, not [x](tel:+15550100)");
    const colors = await item.evaluate((content) => {
      const view = globalThis as unknown as { getComputedStyle(e: unknown): { color: string } };
      const c = content as unknown as { querySelectorAll(s: string): unknown[] };
      return [...c.querySelectorAll("a"), content].map((e) => view.getComputedStyle(e).color);
    });
    const [topic, channel, dropped, text] = colors;
    expect([topic, channel]).toEqual([channel, topic]);
    expect(topic).not.toBe(text);
    expect(dropped).toBe(text);
  });
});
