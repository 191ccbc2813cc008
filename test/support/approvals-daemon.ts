/**
 * The approvals bot (bots/approvals.ts) under `bothost run` for the tests that kill it: its
 * sandbox with the release org, the request and its question as the topic reads them, an
 * approver's button press, and a kill at the next send.
 */
import { expect } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import type { CliProcess } from "./cli.ts";
import { BOT, RELEASE_ORG, REQ, RITA } from "./release-org.ts";
import { postedBy, type ShippedBot, shippedBot } from "./shipped-bot.ts";

export { BOT, REQ };

export const topic = { type: "stream" as const, to: "ops", topic: "deploys" };
export const ask = (what: string) => `@**Approvals** deploy ${what}`;
export const question = (what: string) =>
  `**Rae Requester** asks to deploy **${what}**. A member of release-managers decides:\n1. :check: approve\n2. :cross_mark: reject`;
export const APPROVED = "Deploy of api 1.4.2 approved by Rita Release.";
/** The topic's word once every attempt to call the deploy webhook failed. */
export const HOOK_FAILED = `${APPROVED} The deploy webhook did not answer with success: ask an operator to retry it (\`bothost failed retry\`).`;

/** The bot with the release org; `webhook`: its deploy webhook's URL; `more`: its entry's own lines. */
export const setUp = (webhook?: string, more?: string[]) =>
  shippedBot({
    org: RELEASE_ORG,
    name: "approvals",
    module: "approvals.ts",
    email: BOT,
    settings: ["group: release-managers", ...(webhook ? [`webhook_url: ${webhook}`] : [])],
    ...(more ? { more } : {}),
  });

/** The bot's message `content`'s id, once it was posted with both its buttons on it. */
export async function buttonsOn(bot: ShippedBot, content: string): Promise<number> {
  const { control } = bot.sandbox;
  const botId = control.users().find((u) => u.email === BOT)!.user_id;
  let id = 0;
  await control.waitFor(
    () => {
      const m = control.messages().find((m) => m.sender_id === botId && m.content === content);
      const reactions = control.messageView(Number(m?.id))?.reactions ?? [];
      const mine = reactions.filter((r) => r.user_id === botId);
      id = Number(m?.id);
      return mine.length === 2;
    },
    { timeoutMs: 15_000 },
  );
  return id;
}

/** Rita presses ✓ on message `id` (or the emoji named `emoji`). */
export async function approve(bot: ShippedBot, id: number, emoji = "check") {
  const rita = createClient({
    url: bot.sandbox.url,
    email: RITA,
    apiKey: bot.sandbox.control.apiKeyOf(RITA),
  });
  await rita.reactions.add(id, { emoji_name: emoji });
}

/** `daemon` killed itself, or is killed now. */
export async function dead(daemon: CliProcess) {
  if (daemon.child.exitCode === null && daemon.child.signalCode === null) daemon.kill("SIGKILL");
  expect(await daemon.exited).toEqual({ code: null, signal: "SIGKILL" });
}

/**
 * After the kill: a new daemon (or `running`) posts the outcome, once; the next request in the topic is asked
 * (none waits), and the daemon stops cleanly.
 */
export async function expectOutcomeOnce(bot: ShippedBot, running?: CliProcess) {
  const daemon = running ?? (await bot.start());
  const said = () => postedBy(bot.sandbox, BOT);
  await bot.sandbox.control.waitFor(() => said().includes(APPROVED), { timeoutMs: 15_000 });
  bot.sandbox.control.sendAs(REQ, { ...topic, content: ask("web 2.0") });
  await bot.sandbox.control.waitFor(() => said().length === 3, { timeoutMs: 15_000 });
  expect(said()).toEqual([question("api 1.4.2"), APPROVED, question("web 2.0")]);
  daemon.kill("SIGTERM");
  expect(await daemon.exited).toEqual({ code: 0, signal: null });
}

/**
 * Kill `daemon` at the next `POST /messages` that `act` leads to: `made`, right after the server
 * stored it, before the daemon read the answer; else while the sandbox holds it, never made.
 */
export async function killAtSend(bot: ShippedBot, daemon: CliProcess, made: boolean, act: () => unknown) {
  const { control } = bot.sandbox;
  if (made) {
    bot.onResponse = (r) => {
      if (r.method !== "POST" || r.route !== "/messages") return;
      bot.onResponse = undefined;
      daemon.kill("SIGKILL");
    };
  } else control.delay(60_000, { paths: [/^\/messages$/] });
  await act();
  if (!made) await control.waitFor(() => control.delayed() === 1, { timeoutMs: 15_000 });
  else await daemon.exited;
  await dead(daemon);
  if (!made) {
    // The held send reaches the server after the process died: refused, as a dead client's is.
    control.failNext(1, { status: 502, reset: true, paths: [/^\/messages$/] });
    control.delay(0);
  }
}
