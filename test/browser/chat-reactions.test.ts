/**
 * The chat page shows a message as the web app would for the same server state: its reactions,
 * one button per emoji (names of one emoji grouped) with who reacted (3 reactions or fewer) or
 * how many, pressed when the
 * person picked is one of them; a press adds or takes off their reaction on the server, and a
 * message's react button adds one with an emoji named (as the web app's picker). Edited
 * and moved messages are labelled so; a deleted one goes.
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

if (!chromiumPath) console.warn(`chat-reactions: ${noChromiumMessage}`);

const MEL = "member@sandbox.example";
const OLIVE = "owner@sandbox.example";
const COUNTS = "counts@sandbox.example";

describe.skipIf(!chromiumPath)("reactions, edits and deletions on the chat page", () => {
  let sandbox: Sandbox;
  let browser: Browser;
  let page: Page;
  let id: number;

  const call = (email: string, method: string, route: string, params?: Record<string, string>) =>
    callAs(sandbox, email, method, route, params);
  const react = (email: string, method: "POST" | "DELETE", emoji_name: string) =>
    call(email, method, `/messages/${id}/reactions`, { emoji_name });
  /** The server's reactions on the message, as `name:user`. */
  const held = async () => {
    const { message } = (await call(MEL, "GET", `/messages/${id}`)) as {
      message: { reactions: { emoji_name: string; user_id: number }[] };
    };
    return message.reactions.map((r) => `${r.emoji_name}:${r.user_id}`);
  };
  /** A page's reaction buttons on the message, as `emoji who-or-count pressed`. */
  const shown = (on = page) =>
    on.$$eval(`#log li[data-id="${id}"] .reaction`, (buttons) =>
      buttons.map((b) => `${b.textContent} ${b.getAttribute("aria-pressed")}`),
    );
  const item = () => page.locator(`#log li[data-id="${id}"]`);

  beforeAll(async () => {
    sandbox = await startSandbox({ chatPage: true, heartbeatSeconds: 1 });
    sandbox.control.createUser({
      email: COUNTS,
      full_name: "Cal Counts",
      channels: ["general"],
      settings: { display_emoji_reaction_users: false },
    });
    const sent = await call(MEL, "POST", "/messages", {
      type: "channel",
      to: "general",
      topic: "deploys",
      content: "Deploy api 1.4.2?",
    });
    id = sent.id as number;
    // Made before the page opens: the page reads them with the message.
    expect(await react(OLIVE, "POST", "check")).toMatchObject({ result: "success" });
    expect(await react(MEL, "POST", "+1")).toMatchObject({ result: "success" });
    expect(await react(OLIVE, "POST", "thumbs_up")).toMatchObject({ result: "success" });
    browser = await launchChromium();
    page = await openChat(browser, `${sandbox.url}/chat/`, MEL);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await sandbox?.stop();
  });

  it("shows the reactions a message already had, one emoji's names together, naming who reacted", async () => {
    await item().waitFor();
    // 3 reactions or fewer, with display_emoji_reaction_users on (the default): names, as the web app.
    expect(await shown()).toEqual(["✅ Olive Owner false", "👍 You, Olive Owner true"]);
  });

  it("a press adds the person's reaction, a second takes it off, on the server and the page", async () => {
    const idOf = (email: string) => sandbox.control.users().find((u) => u.email === email)!.user_id;
    const [mel, olive] = [idOf(MEL), idOf(OLIVE)];
    await item().locator(".reaction", { hasText: "✅" }).click();
    await expect.poll(held).toEqual([`check:${olive}`, `+1:${mel}`, `+1:${olive}`, `check:${mel}`]);
    // More than 3: counts.
    await expect.poll(() => shown()).toEqual(["✅ 2 true", "👍 2 true"]);
    await item().locator(".reaction", { hasText: "👍" }).click();
    await expect.poll(held).toEqual([`check:${olive}`, `+1:${olive}`, `check:${mel}`]);
    await expect.poll(() => shown()).toEqual(["✅ Olive Owner, You true", "👍 Olive Owner false"]);
  });

  it("follows reactions others add and take off", async () => {
    expect(await react(OLIVE, "DELETE", "check")).toMatchObject({ result: "success" });
    expect(await react(OLIVE, "DELETE", "+1")).toMatchObject({ result: "success" });
    await expect.poll(() => shown()).toEqual(["✅ You true"]);
    expect(await react(OLIVE, "POST", "tada")).toMatchObject({ result: "success" });
    await expect.poll(() => shown()).toEqual(["✅ You true", "🎉 Olive Owner false"]);
  });

  it("reacts with an emoji named, one not on the message yet, and says what the server refused", async () => {
    const names = ["thumbs_up", "no_such_emoji"];
    page.on("dialog", (dialog) => dialog.accept(names.shift()));
    await item().locator("button[data-action=react]").click();
    await expect.poll(() => shown()).toEqual(["✅ You true", "🎉 Olive Owner false", "👍 You true"]);
    await item().locator("button[data-action=react]").click();
    await page.locator("#status", { hasText: "refused: Emoji 'no_such_emoji' does not exist" }).waitFor();
    expect(await react(MEL, "DELETE", "thumbs_up")).toMatchObject({ result: "success" });
    await expect.poll(() => shown()).toEqual(["✅ You true", "🎉 Olive Owner false"]);
  });

  it("shows counts, not names, to a person whose display_emoji_reaction_users is off", async () => {
    const counts = await openChat(browser, `${sandbox.url}/chat/`, COUNTS);
    await counts.locator(`#log li[data-id="${id}"] .reaction`).first().waitFor();
    expect(await shown(counts)).toEqual(["✅ 1 false", "🎉 1 false"]);
    await counts.close();
  });

  it("labels a moved message MOVED and an edited one EDITED, and drops a deleted one", async () => {
    const marker = item().locator(".marker");
    expect(await marker.textContent()).toBe("");
    expect(await call(MEL, "PATCH", `/messages/${id}`, { topic: "releases" })).toMatchObject({
      result: "success",
    });
    await item().locator(".where", { hasText: "releases" }).waitFor();
    expect(await marker.textContent()).toBe("moved");
    expect(await call(MEL, "PATCH", `/messages/${id}`, { content: "Deploy api 1.4.3?" })).toMatchObject({
      result: "success",
    });
    await item().locator(".content", { hasText: "1.4.3" }).waitFor();
    expect(await marker.textContent()).toBe("edited");
    await page.reload();
    await signInChat(page, MEL);
    expect(await item().locator(".marker").textContent()).toBe("edited");
    await item().locator("button[data-action=delete]").click();
    await expect.poll(() => item().count()).toBe(0);
    expect(await call(MEL, "GET", `/messages/${id}`)).toMatchObject({ result: "error" });
  });
});
