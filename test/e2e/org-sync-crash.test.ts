/**
 * The org-sync bot (bots/org-sync.ts) under `bothost run`, configured as its doc comment shows
 * (an owner bot: new-user defaults, a channel folder, a playground, an email domain, two group
 * rules), killed with SIGKILL between two of its changes: the sandbox kills the daemon the moment
 * it answers a change, so the change landed and the daemon never read the reply. Each start
 * reads the organization again and makes only what is still missing: every change is made once,
 * and the last start finds nothing to change. The same for a sync started by a member who joins
 * (killed between the two groups they belong in), and for a group add held by the server before
 * it acted (killed meanwhile, then refused: it never landed).
 */
import { expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import type { CliProcess } from "../support/cli.ts";
import { shippedBot, useShippedBots } from "../support/shipped-bot.ts";

const BOT = "org-sync-bot@sandbox.example";
const OWNER = "owner@sandbox.example";
const MOD = "mod@sandbox.example";
const MEMBER = "member@sandbox.example";

useShippedBots();

/** A change org-sync makes: any POST or PATCH but the register calls. */
const isChange = (r: { method: string; path?: string; route?: string | null }) =>
  (r.method === "POST" || r.method === "PATCH") && (r.route ?? r.path) !== "/register";

/**
 * The restart's syncs: the first applies the one change left, each after it finds nothing to do.
 * How many there are depends on the order things run in: the start's, and the run again of an
 * event the kill cut (a member's: saved before their poll, saved-events.ts).
 */
async function appliedThenNothing(summaries: () => string[]): Promise<void> {
  await expect.poll(() => summaries().length, { timeout: 15_000 }).toBeGreaterThanOrEqual(1);
  const [applied, ...rest] = summaries();
  expect(applied).toBe("org-sync: 1 of 1 change(s) applied");
  expect(rest.every((s) => s === "org-sync: nothing to change")).toBe(true);
}

async function setUp() {
  const bot = await shippedBot({
    org: {
      realm: { name: "Sandbox", host: "sandbox.example" },
      users: [
        { email: OWNER, full_name: "Olive Owner", role: "owner" },
        { email: MOD, full_name: "Moe Moderator", role: "moderator" },
        { email: MEMBER, full_name: "Mel Member", role: "member" },
      ],
      bots: [{ email: BOT, full_name: "Org Sync", type: "generic", owner: OWNER, role: "owner" }],
      channels: [{ name: "general", subscribers: [OWNER, MOD, MEMBER, BOT] }],
      user_groups: [
        { name: "everyone-humans", members: [] },
        { name: "staff", members: [OWNER] },
      ],
    },
    name: "org-sync",
    module: "org-sync.ts",
    email: BOT,
    settings: [
      "user_settings_defaults:",
      "  color_scheme: 2",
      "  enter_sends: true",
      "  emojiset: text",
      "channel_folders:",
      '  - { name: Teams, description: "One channel per team" }',
      "playgrounds:",
      '  - { name: Rust playground, pygments_language: Rust, url_template: "https://play.rust-lang.org/?code={code}" }',
      "email_domains:",
      "  - { domain: example.org, allow_subdomains: false }",
      "group_membership:",
      "  - { group: everyone-humans }",
      "  - { group: staff, roles: [owner, admin, moderator] }",
    ],
  });
  const { sandbox, launch } = bot;
  /** Kill `daemon` the moment the sandbox answers its next change (the change landed). */
  const killAtChange = (daemon: CliProcess) => {
    bot.onResponse = (r) => {
      if (!isChange(r)) return;
      bot.onResponse = undefined;
      daemon.kill("SIGKILL");
    };
  };
  /** The summary of each sync `daemon` finished. */
  const summaries = (daemon: CliProcess) =>
    daemon
      .logs()
      .map((l) => String(l.msg))
      .filter((m) => /^org-sync: (nothing to change|\d+ of \d+ change)/.test(m));
  /** Every change that reached the server, `METHOD /path status`, in order. */
  const changes = () =>
    sandbox.control.requests.filter((r) => isChange(r)).map((r) => `${r.method} ${r.path} ${r.status}`);
  const owner = createClient({ url: sandbox.url, email: OWNER, apiKey: sandbox.control.apiKeyOf(OWNER) });
  const idOf = (email: string) => sandbox.control.users().find((u) => u.email === email)!.user_id;
  /** What the organization's owner sees of what org-sync keeps. */
  const seen = async () => {
    const state = await owner.events.register({
      event_types: ["heartbeat"],
      fetch_event_types: [
        "realm_user_settings_defaults",
        "channel_folders",
        "realm_playgrounds",
        "realm_domains",
        "realm_user_groups",
      ],
    });
    if (state.queue_id) await owner.events.deleteQueue(state.queue_id);
    const s = state as unknown as {
      realm_user_settings_defaults: Record<string, unknown>;
      channel_folders: { name: string }[];
      realm_playgrounds: { name: string }[];
      realm_domains: { domain: string }[];
      realm_user_groups: { name: string; members: number[] }[];
    };
    const group = (name: string) =>
      [...s.realm_user_groups.find((g) => g.name === name)!.members].sort((a, b) => a - b);
    return {
      defaults: [
        s.realm_user_settings_defaults.color_scheme,
        s.realm_user_settings_defaults.enter_sends,
        s.realm_user_settings_defaults.emojiset,
      ],
      folders: s.channel_folders.map((f) => f.name),
      playgrounds: s.realm_playgrounds.map((p) => p.name),
      domains: s.realm_domains.map((d) => d.domain),
      humans: group("everyone-humans"),
      staff: group("staff"),
    };
  };
  const ids = (...emails: string[]) => emails.map(idOf).sort((a, b) => a - b);
  return { sandbox, launch, killAtChange, summaries, changes, seen, ids, owner };
}

it("killed right after each change landed, one after the other: each change made once, the last start finds nothing to do", {
  timeout: 60_000,
}, async () => {
  const { launch, killAtChange, summaries, changes, seen, ids } = await setUp();
  // Six changes: each daemon makes the next one and is killed as the server answers it.
  for (let i = 0; i < 6; i++) {
    const daemon = launch();
    killAtChange(daemon);
    expect(await daemon.exited).toEqual({ code: null, signal: "SIGKILL" });
    expect(changes()).toHaveLength(i + 1);
  }
  const last = launch();
  await last.waitForLog((l) => l.msg === "daemon started", 20_000);
  await expect.poll(() => summaries(last), { timeout: 15_000 }).toEqual(["org-sync: nothing to change"]);
  const made = changes();
  expect(made.every((c) => c.endsWith(" 200"))).toBe(true);
  expect(new Set(made.map((c) => c.split(" ").slice(0, 2).join(" "))).size).toBe(6);
  expect(await seen()).toEqual({
    defaults: [2, true, "text"],
    folders: ["Teams"],
    playgrounds: ["Rust playground"],
    domains: ["example.org"],
    humans: ids(OWNER, MOD, MEMBER),
    staff: ids(OWNER, MOD),
  });
});

it("a member who joins: killed after their first group add landed, the next start adds the second once", {
  timeout: 60_000,
}, async () => {
  const { sandbox, launch, killAtChange, summaries, changes, seen, ids } = await setUp();
  const first = launch();
  await first.waitForLog((l) => l.msg === "daemon started", 20_000);
  await expect
    .poll(() => summaries(first), { timeout: 15_000 })
    .toContain("org-sync: 6 of 6 change(s) applied");
  const before = changes().length;
  killAtChange(first);
  sandbox.control.createUser({ email: "ann@sandbox.example", full_name: "Ann Admin", role: "admin" });
  expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
  expect(changes().slice(before)).toHaveLength(1);

  const second = launch();
  await appliedThenNothing(() => summaries(second));
  expect(changes().slice(before)).toHaveLength(2);
  const all = await seen();
  expect([all.humans, all.staff]).toEqual([
    ids(OWNER, MOD, MEMBER, "ann@sandbox.example"),
    ids(OWNER, MOD, "ann@sandbox.example"),
  ]);
});

it("killed while the second group add is held before the server acted: the next start makes it once", {
  timeout: 60_000,
}, async () => {
  const { sandbox, launch, summaries, changes, seen, ids, owner } = await setUp();
  const { user_groups } = await owner.request<{ user_groups: { id: number; name: string }[] }>(
    "GET",
    "/user_groups",
  );
  const staffId = user_groups.find((g) => g.name === "staff")!.id;
  sandbox.control.delay(60_000, { paths: [`/user_groups/${staffId}/members`] });
  const first = launch();
  await sandbox.control.waitFor(() => sandbox.control.delayed() > 0, { timeoutMs: 15_000 });
  expect(changes()).toHaveLength(5);
  first.kill("SIGKILL");
  await first.exited;
  sandbox.control.failNext(1, { status: 502, paths: [`/user_groups/${staffId}/members`] });
  sandbox.control.delay(0);

  const second = launch();
  await appliedThenNothing(() => summaries(second));
  expect((await seen()).staff).toEqual(ids(OWNER, MOD));
  expect(changes().filter((c) => c.startsWith(`POST /user_groups/${staffId}/members 200`))).toHaveLength(1);
});
