/**
 * One of the shipped bots (bots/<module>) under `bothost run` against a sandbox of the test's
 * own, configured as its documentation shows, for tests that kill the process at a chosen moment
 * and start it again on the same state. The API key is only in the child's environment.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { OrgInput, ResponseRecord, Sandbox, SandboxOptions } from "../../src/sandbox/types.ts";
import { type CliProcess, repoRoot, spawnCli } from "./cli.ts";
import { closeAfterTest, startE2eSandbox } from "./e2e-daemon.ts";

/** The file's lifecycle (dist/ built; after each test every daemon killed, sandbox and folder closed). */
export { useE2eCleanup as useShippedBots } from "./e2e-daemon.ts";

export interface ShippedBot {
  sandbox: Sandbox;
  /**
   * A daemon, not waited for (a bot may act before the daemon logs that it started); `env`: more
   * of its environment (e.g. `BOTHOST_FAILPOINTS`).
   */
  launch(env?: Record<string, string>): CliProcess;
  /** A daemon, once it logged that it started. */
  start(env?: Record<string, string>): Promise<CliProcess>;
  /** Called with each response the sandbox makes, before the daemon reads it (undefined: none). */
  onResponse: ((record: ResponseRecord) => void) | undefined;
  /** The config file (for `bothost failed …` commands). */
  config: string;
  /** The environment the config's API key is read from. */
  env: Record<string, string>;
}

/**
 * A sandbox with `org` (1 s heartbeats, 3 s long-polls) and a config running `module` as the bot
 * `name` with `email`'s key; `settings` are the YAML lines under `settings:`, indented as there
 * (none: no `settings:`); `more`: YAML lines of the bot's own besides (`retries: …`), indented as
 * there; `state`: the config's `state:` section (a crash backend's; default a folder of the test's).
 */
export async function shippedBot(o: {
  org: OrgInput;
  name: string;
  module: string;
  email: string;
  settings: string[];
  more?: string[];
  state?: (dir: string) => string;
  /** More of the sandbox's options (its `clock`). */
  sandbox?: SandboxOptions;
}): Promise<ShippedBot> {
  const dir = await mkdtemp(path.join(tmpdir(), `bothost-${o.name}-`));
  closeAfterTest(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, "bothost.yaml");
  const bot: ShippedBot = {
    sandbox: await startE2eSandbox(o.org, { ...o.sandbox, onResponse: (r) => bot.onResponse?.(r) }),
    launch: (more = {}) => spawnCli(["run", "--config", file], { env: { ...env, ...more } }),
    start: async (more = {}) => {
      const daemon = bot.launch(more);
      await daemon.waitForLog((l) => l.msg === "daemon started", 20_000);
      return daemon;
    },
    onResponse: undefined,
    config: file,
    env: {},
  };
  const env = { KEY: bot.sandbox.control.apiKeyOf(o.email) };
  bot.env = env;
  await writeFile(
    file,
    [
      `server:\n  url: ${bot.sandbox.url}`,
      o.state?.(dir) ?? `state:\n  path: ${path.join(dir, "state")}`,
      "log:\n  level: info\n  pretty: false",
      "bots:",
      `  ${o.name}:`,
      `    module: ${path.join(repoRoot, "bots", o.module)}`,
      `    email: ${o.email}`,
      `    api_key: \${KEY}`,
      ...(o.more ?? []).map((line) => `    ${line}`),
      ...(o.settings.length > 0 ? ["    settings:", ...o.settings.map((line) => `      ${line}`)] : []),
    ].join("\n") + "\n",
  );
  return bot;
}

/** What `email` has posted, oldest first. */
export function postedBy(sandbox: Sandbox, email: string): string[] {
  const id = sandbox.control.users().find((u) => u.email === email)!.user_id;
  return sandbox.control
    .messages()
    .filter((m) => m.sender_id === id)
    .map((m) => String(m.content));
}

export const ANNOUNCE_BOT = "announce-bot@sandbox.example";

/**
 * The announcements bot with `settings` (lines under `settings:`), on an org of an owner and the
 * bot, both in the channel `team`; `state` as for {@link shippedBot}.
 */
export function announcementsBot(
  settings: string[],
  state?: (dir: string) => string,
  sandbox?: SandboxOptions,
): Promise<ShippedBot> {
  const owner = "owner@sandbox.example";
  return shippedBot({
    org: {
      realm: { name: "Sandbox", host: "sandbox.example" },
      users: [{ email: owner, full_name: "Olive Owner", role: "owner" }],
      bots: [{ email: ANNOUNCE_BOT, full_name: "Announcements", type: "generic", owner }],
      channels: [{ name: "team", subscribers: [owner, ANNOUNCE_BOT] }],
    },
    name: "announcements",
    module: "announcements.ts",
    email: ANNOUNCE_BOT,
    settings,
    ...(state ? { state } : {}),
    ...(sandbox ? { sandbox } : {}),
  });
}

export const MODERATION_BOT = "moderation-bot@sandbox.example";

/**
 * An org for the moderation bot: an owner and a member with the bot in `general`, and `moderation`
 * (the owner's) as the moderation request channel.
 */
export const MODERATION_ORG: OrgInput = {
  realm: { name: "E2E", host: "sandbox.example", moderation_request_channel: "moderation" },
  users: [
    { email: "owner@sandbox.example", full_name: "Olive Owner", role: "owner" },
    { email: "member@sandbox.example", full_name: "Mel Member", role: "member" },
  ],
  bots: [{ email: MODERATION_BOT, full_name: "Moderation", type: "generic", owner: "owner@sandbox.example" }],
  channels: [
    { name: "general", subscribers: ["owner@sandbox.example", "member@sandbox.example", MODERATION_BOT] },
    { name: "moderation", privacy: "private", subscribers: ["owner@sandbox.example"] },
  ],
};
