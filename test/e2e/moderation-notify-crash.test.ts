/**
 * The shipped moderation bot under `bothost run`, killed (kill -9) after it reported a message and
 * before its direct message to the sender (`notify_sender`) reached the server: at the next start
 * the message is caught up, its handler runs again and the sender is told, once (the report is not
 * made twice). A later edit of the message, checked again, finds it reported: the sender is not
 * told again. A reply action made before the kill, its message moved alone while the bot was down,
 * is found where it was posted, not made again at the message's new place. On the file store, and
 * on Redis when one answers.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { assertBuilt, killAll, repoRoot, spawnCli } from "../support/cli.ts";
import { crashBackends } from "../support/crash-backends.ts";
import { MODERATION_ORG } from "../support/shipped-bot.ts";

const MEMBER = "member@sandbox.example";
const BOT = "moderation-bot@sandbox.example";

const opened: Array<() => Promise<unknown>> = [];
beforeAll(assertBuilt);
afterEach(async () => {
  await killAll();
  for (const close of opened.splice(0).reverse()) await close();
});

const reportsPosted = (s: Sandbox) =>
  s.control.messages().filter((m) => String(m.content).includes("reported a message sent by"));
/** The bot's direct messages (to the sender: it sends no other). */
const told = (s: Sandbox) => {
  const botId = s.control.users().find((u) => u.email === BOT)!.user_id;
  return s.control
    .messages()
    .filter((m) => m.sender_id === botId && m.type === "private")
    .map((m) => String(m.content));
};
const NOTICE = 'Hi Mel Member, your message was sent to the moderators: blocked word: uses "scam".';

const backends = await crashBackends("moderation-notify-crash");

/** A sandbox with a moderation request channel, and the config of `bothost run` for `rules`. */
async function setUp(
  backendFor: (dir: string) => { yaml: string },
  rules: string,
  notice = "Hi {{name}}, your message was sent to the moderators: {{details}}.",
) {
  const sandbox = await startSandbox({
    heartbeatSeconds: 1,
    longpollTimeoutSeconds: 3,
    org: MODERATION_ORG,
  });
  opened.push(() => sandbox.stop());
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-moderation-notify-"));
  opened.push(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, "bothost.yaml");
  await writeFile(
    file,
    [
      `server:\n  url: ${sandbox.url}`,
      backendFor(dir).yaml,
      "log:\n  level: info\n  pretty: false",
      "bots:",
      "  moderation:",
      `    module: ${path.join(repoRoot, "bots/moderation.ts")}`,
      `    email: ${BOT}`,
      `    api_key: \${KEY}`,
      "    settings:",
      `      notify_sender: "${notice}"`,
      "      rules:",
      `        ${rules}`,
      "",
    ].join("\n"),
  );
  return { sandbox, file, env: { KEY: sandbox.control.apiKeyOf(BOT) } };
}

/**
 * Starts `bothost run`, posts `content` (the last of `texts`) with the direct message to the
 * sender held, kills the daemon once the report is made, and starts it again: resolves the
 * message's id and the second daemon.
 */
async function killedBeforeNotice(
  sandbox: Sandbox,
  file: string,
  env: Record<string, string>,
  texts: string[],
) {
  const first = spawnCli(["run", "--config", file], { env });
  await first.waitForLog((l) => l.msg === "daemon started", 20_000);
  const post = (content: string) =>
    sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "deals", content }).id;
  // Earlier messages are handled first (one conversation is handled in order); none sends.
  for (const text of texts.slice(0, -1)) post(text);
  // The direct message to the sender is held; the report goes through.
  sandbox.control.delay(60_000, { paths: [/^\/messages$/] });
  const id = post(texts.at(-1)!);
  await sandbox.control.waitFor(
    () => sandbox.control.delayed() === 1 && reportsPosted(sandbox).length === 1,
    {
      timeoutMs: 20_000,
    },
  );
  first.kill("SIGKILL");
  expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
  // The held send never reaches the server: the process died before it was made.
  sandbox.control.failNext(1, { status: 502, reset: true, paths: [/^\/messages$/] });
  sandbox.control.delay(0);
  expect(told(sandbox)).toEqual([]);

  const again = spawnCli(["run", "--config", file], { env });
  await again.waitForLog((l) => l.msg === "daemon started", 20_000);
  await sandbox.control.waitFor(() => told(sandbox).length > 0, { timeoutMs: 20_000 });
  return { id, again };
}

describe.each(backends)("on the %s", (_name, backendFor) => {
  it("killed between the report and notify_sender: the restarted bot tells the sender once; an edit does not tell again", {
    timeout: 90_000,
  }, async () => {
    const { sandbox, file, env } = await setUp(backendFor, "keywords: { words: [scam] }");
    const { id, again } = await killedBeforeNotice(sandbox, file, env, ["what a scam this is"]);
    expect(told(sandbox)).toEqual([NOTICE]);
    expect(reportsPosted(sandbox)).toHaveLength(1);

    // An edit is checked again: already reported, so no report and no second direct message.
    const member = createClient({
      url: sandbox.url,
      email: MEMBER,
      apiKey: sandbox.control.apiKeyOf(MEMBER),
    });
    await member.messages.update(id, { content: "what a scam this is, a real scam" });
    await again.waitForLog((l) => l.msg === `message ${id} not reported (duplicate)`, 20_000);
    expect(told(sandbox)).toEqual([NOTICE]);
    expect(reportsPosted(sandbox)).toHaveLength(1);
    again.kill("SIGTERM");
    expect(await again.exited).toEqual({ code: 0, signal: null });
  });

  // A posting rule counts in memory: the restarted bot alone would count the caught-up message once.
  it("a flood, killed between the report and notify_sender: the restarted bot tells the sender once", {
    timeout: 90_000,
  }, async () => {
    const { sandbox, file, env } = await setUp(backendFor, "flood: { max_messages: 1, per_seconds: 60 }");
    const { again } = await killedBeforeNotice(sandbox, file, env, ["good morning", "good morning again"]);
    expect(told(sandbox)).toEqual([
      "Hi Mel Member, your message was sent to the moderators: message flood: 2 messages in 60 s (limit 1).",
    ]);
    expect(reportsPosted(sandbox)).toHaveLength(1);
    again.kill("SIGTERM");
    expect(await again.exited).toEqual({ code: 0, signal: null });
  });

  // A moderator moves spam away quickly: the run again after the kill words its notice for the
  // message's new topic, and the notice the first run sent is found by the words it was sent with.
  it("killed once notify_sender reached the server, the message moved meanwhile: the sender is told once", {
    timeout: 90_000,
  }, async () => {
    const { sandbox, file, env } = await setUp(
      backendFor,
      `keywords: { words: [scam], actions: [report, ${NOTIFY_CHANNEL}] }`,
      "Hi {{name}}, your message in {{where}} was sent to the moderators.",
    );
    const notice = "Hi Mel Member, your message in #general > deals was sent to the moderators.";
    const again = await killedAtSendThenMoved(sandbox, file, env, () =>
      expect(told(sandbox)).toEqual([notice]),
    );
    expect(told(sandbox)).toEqual([notice]);
    expect(reportsPosted(sandbox)).toHaveLength(1);
    again.kill("SIGTERM");
    expect(await again.exited).toEqual({ code: 0, signal: null });
  });

  // Moved alone (change_one), the message's run again aims its reply at the new topic; the reply
  // made before the kill stayed in the topic it was posted to, and is found there.
  it("killed once a reply action reached the server, the message moved alone meanwhile: replied once", {
    timeout: 90_000,
  }, async () => {
    const { sandbox, file, env } = await setUp(
      backendFor,
      `keywords: { words: [scam], actions: [{ reply: 'please keep it civil' }, ${NOTIFY_CHANNEL}] }`,
    );
    const replies = () =>
      sandbox.control
        .messages()
        .filter((m) => m.content === "please keep it civil")
        .map((m) => m.topic);
    const again = await killedAtSendThenMoved(sandbox, file, env, () => expect(replies()).toEqual(["deals"]));
    expect(replies()).toEqual(["deals"]);
    again.kill("SIGTERM");
    expect(await again.exited).toEqual({ code: 0, signal: null });
  });
});

/** The action the handler takes last: once its message is posted, the earlier sends were made or found. */
const NOTIFY_CHANNEL =
  "{ notify_channel: { channel: general, topic: mod-log, content: 'flagged {{link}}' } }";

/**
 * Starts `bothost run` killed as its first send reaches the server, posts a message it flags in
 * #general > deals, checks what the first run made (`made`), moves the message alone to
 * "quarantine", and starts the daemon again: resolves it once its last action is posted.
 */
async function killedAtSendThenMoved(
  sandbox: Sandbox,
  file: string,
  env: Record<string, string>,
  made: () => void,
) {
  const first = spawnCli(["run", "--config", file], {
    env: { ...env, BOTHOST_FAILPOINTS: "message-sent" },
  });
  await first.waitForLog((l) => l.msg === "daemon started", 20_000);
  const { id } = sandbox.control.sendAs(MEMBER, {
    type: "stream",
    to: "general",
    topic: "deals",
    content: "what a scam this is",
  });
  expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
  made();
  const owner = createClient({
    url: sandbox.url,
    email: "owner@sandbox.example",
    apiKey: sandbox.control.apiKeyOf("owner@sandbox.example"),
  });
  await owner.messages.update(id, { topic: "quarantine", propagate_mode: "change_one" });

  const again = spawnCli(["run", "--config", file], { env });
  await again.waitForLog((l) => l.msg === "daemon started", 20_000);
  const flagged = () => sandbox.control.messages().filter((m) => String(m.content).startsWith("flagged "));
  await sandbox.control.waitFor(() => flagged().length > 0, { timeoutMs: 20_000 });
  return again;
}
