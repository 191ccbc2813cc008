/**
 * The shipped org-sync bot (bots/org-sync.ts) against the sandbox: the dry-run plan, applying it,
 * an idempotent second run, keeping group membership as users join and groups change, and trying
 * again (on a test clock) a change that failed for a passing reason.
 * It imports "bothost", which resolves to dist/: run `npm run build` first (`npm test` does).
 */
import { afterEach, describe, expect, it } from "vitest";
import orgSync from "../../../bots/org-sync.ts";
import { type Client, createClient } from "../../../src/api/create-client.ts";
import { defaultOrg } from "../../../src/sandbox/org/default-org.ts";
import { startSandbox } from "../../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../../src/sandbox/types.ts";
import { type BotDaemon, requestsSince, startBots } from "../../support/bot-daemon.ts";
import { ManualClock } from "../../support/manual-clock.ts";

const SYNC = "sync-bot@sandbox.example";
const OWNER = "owner@sandbox.example";
const MEMBER = "member@sandbox.example";

const declared = {
  user_settings_defaults: { color_scheme: 2, enter_sends: true, emojiset: "text" },
  channel_folders: [{ name: "Teams", description: "One channel per team" }],
  playgrounds: [
    {
      name: "Rust playground",
      pygments_language: "Rust",
      url_template: "https://play.rust-lang.org/?code={code}",
    },
    { name: "Py", pygments_language: "Python", url_template: "https://py.example/?c={code}" },
  ],
  email_domains: [{ domain: "example.org", allow_subdomains: false }],
  group_membership: [{ group: "humans" }, { group: "missing-group" }],
};

let sandbox: Sandbox | undefined;
let running: BotDaemon | undefined;

afterEach(async () => {
  await running?.stop();
  running = undefined;
  await sandbox?.stop();
  sandbox = undefined;
});

/** The sandbox, on `clock` when given (the daemon's then too: see {@link startSync}). */
async function startOrg(clock?: ManualClock) {
  const org = defaultOrg();
  org.bots = [...(org.bots ?? []), { email: SYNC, full_name: "Org Sync", owner: OWNER, role: "owner" }];
  org.user_groups = [{ name: "humans", members: [MEMBER] }];
  org.playgrounds = [
    { name: "Py", pygments_language: "Python", url_template: "https://old.example/?c={code}" },
  ];
  sandbox = await startSandbox({
    heartbeatSeconds: 1,
    org,
    ...(clock ? { clock: { now: () => clock.now() } } : {}),
  });
  return sandbox;
}

async function startSync(settings: Record<string, unknown>, clock?: ManualClock) {
  const bots = { "org-sync": { email: SYNC, definition: orgSync, settings } };
  running = await startBots(sandbox!, bots, clock ? { clock } : {});
  return running;
}

/** The summary line of each sync so far. */
const summary = () =>
  running!.logged("org-sync: ").filter((l) => /nothing to change|planned|applied/.test(String(l.msg)));
const summaries = () => summary().map((l) => l.msg);
const writes = (from: number) =>
  requestsSince(sandbox!, from).filter((r) => /^(POST|PATCH)/.test(r) && !/ \/(register|events)$/.test(r));
const owner = () =>
  createClient({ url: sandbox!.url, email: OWNER, apiKey: sandbox!.control.apiKeyOf(OWNER) });
const humans = async (c: Client) => {
  const { user_groups } = await c.request<{ user_groups: { name: string; members: number[] }[] }>(
    "GET",
    "/user_groups",
  );
  return [...(user_groups.find((g) => g.name === "humans")?.members ?? [])].sort((a, b) => a - b);
};
const idOf = (email: string) => sandbox!.control.users().find((u) => u.email === email)!.user_id;

describe("org-sync", () => {
  it("dry run: logs the plan and the notes, and changes nothing", async () => {
    const s = await startOrg();
    const mark = s.control.requests.length;
    const bot = await startSync({ ...declared, dry_run: true });
    await expect.poll(() => summary().length).toBe(1);
    expect(summary()[0]!.msg).toBe("org-sync: 5 change(s) planned (dry run: nothing was changed)");
    expect(bot.logged("org-sync (dry run): ").map((l) => l.msg)).toEqual([
      'org-sync (dry run): set new-user defaults enter_sends=true, color_scheme=2, emojiset="text"',
      'org-sync (dry run): create channel folder "Teams"',
      'org-sync (dry run): add code playground "Rust playground" for Rust (https://play.rust-lang.org/?code={code})',
      "org-sync (dry run): allow email domain example.org",
      `org-sync (dry run): add users ${idOf(OWNER)} to group "humans"`,
    ]);
    expect(
      bot
        .logged("org-sync: ")
        .filter((l) => l.level === 40)
        .map((l) => l.msg),
    ).toEqual([
      'org-sync: playground "Py" (Python) has url_template https://old.example/?c={code}; left as it is',
      'org-sync: no active user group named "missing-group": create it, then org-sync fills it',
    ]);
    expect(writes(mark)).toEqual([]);
  });

  it("applies the plan, and a second run makes no changes", async () => {
    const s = await startOrg();
    const mark = s.control.requests.length;
    await startSync(declared);
    // The start sync applies the plan; its group change comes back as a user_group event
    // (add_members), which starts no sync.
    await expect.poll(summaries).toEqual(["org-sync: 5 of 5 change(s) applied"]);
    expect(writes(mark).sort()).toEqual(
      [
        "PATCH /realm/user_settings_defaults",
        "POST /channel_folders/create",
        "POST /realm/playgrounds",
        "POST /realm/domains",
        `POST /user_groups/${(await owner().request<{ user_groups: { id: number; name: string }[] }>("GET", "/user_groups")).user_groups.find((g) => g.name === "humans")!.id}/members`,
      ].sort(),
    );
    expect(await humans(owner())).toEqual([idOf(OWNER), idOf(MEMBER)].sort((a, b) => a - b));
    const { channel_folders } = await owner().request<{ channel_folders: { name: string }[] }>(
      "GET",
      "/channel_folders",
    );
    expect(channel_folders.map((f) => f.name)).toEqual(["Teams"]);

    await running!.stop();
    const again = s.control.requests.length;
    await startSync(declared);
    await expect.poll(() => summary().length).toBe(1);
    expect(summary()[0]!.msg).toBe("org-sync: nothing to change");
    expect(writes(again)).toEqual([]);
  });

  it("adds new users to the group, and puts back a member removed by hand", async () => {
    const clock = new ManualClock(Date.parse("2026-11-30T12:00:10Z"));
    const s = await startOrg(clock);
    await startSync({ group_membership: [{ group: "humans" }] }, clock);
    await expect.poll(summaries).toEqual(["org-sync: 1 of 1 change(s) applied"]);
    const ann = s.control.createUser({ email: "ann@sandbox.example", full_name: "Ann" });
    s.control.createUser({
      email: "helper-bot@sandbox.example",
      full_name: "Helper",
      bot: "generic",
      owner: OWNER,
    });
    await expect
      .poll(() => humans(owner()))
      .toEqual([idOf(OWNER), idOf(MEMBER), ann.user_id].sort((a, b) => a - b));

    const groupId = (
      await owner().request<{ user_groups: { id: number; name: string }[] }>("GET", "/user_groups")
    ).user_groups.find((g) => g.name === "humans")!.id;
    await owner().userGroups.updateMembers(groupId, { delete: [ann.user_id] });
    // Within 30 s of the sync that added Ann: synced at the minute's check.
    await clock.tickTo(Date.parse("2026-11-30T12:01:00Z"));
    await expect.poll(() => humans(owner())).toContain(ann.user_id);
    expect(running!.logged("org-sync: add users").some((l) => String(l.msg).includes(`${ann.user_id}`))).toBe(
      true,
    );
  });

  it("logs a change the server refuses and applies the rest", async () => {
    const s = await startOrg();
    s.control.updateUser(SYNC, { role: "admin" }); // email domains need an owner
    await startSync({ email_domains: [{ domain: "example.org" }], channel_folders: [{ name: "Teams" }] });
    await expect.poll(() => summary().length).toBe(1);
    expect(summary()[0]!.msg).toBe("org-sync: 1 of 2 change(s) applied");
    const failure = running!.logged("failed:").find((l) => l.level === 50)!;
    expect(failure).toMatchObject({
      level: 50,
      action: "email_domain",
      code: "UNAUTHORIZED_PRINCIPAL",
      status: 400,
    });
    expect(failure).not.toHaveProperty("err"); // the refusal is the organization's to fix: no stack
    expect(failure.msg).toContain("org-sync: allow email domain example.org failed:");
  });

  it("checks new-user defaults against the server's parameters", () => {
    const parse = (v: unknown) =>
      (orgSync.settings as { safeParse(v: unknown): { error?: { issues: unknown[] } } }).safeParse(v);
    const issues = parse({ user_settings_defaults: { color_scheme: 7, enter_sends: "yes", colour: 1 } }).error
      ?.issues;
    expect(issues).toHaveLength(3);
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          path: ["user_settings_defaults"],
          code: "unrecognized_keys",
          keys: ["colour"],
        }),
        expect.objectContaining({ path: ["user_settings_defaults", "enter_sends"], code: "invalid_type" }),
        expect.objectContaining({
          path: ["user_settings_defaults", "color_scheme"],
          message: "must be one of 1, 2, 3",
        }),
      ]),
    );
  });
});

describe("org-sync, the account's call budget", () => {
  it("20 joins one after the other cost two syncs, not one each", async () => {
    const clock = new ManualClock(Date.parse("2026-11-30T12:00:10Z"));
    const s = await startOrg(clock);
    await startSync({ group_membership: [{ group: "humans" }] }, clock);
    await expect.poll(() => summary().length).toBeGreaterThan(0);
    const mark = s.control.requests.length;
    // One join at a time, each read by the bot before the next: the first is synced at once, the
    // others wait for the minute's check (one the bot had not read by then, for the next).
    const joined = [];
    for (let i = 0; i < 20; i++) {
      joined.push(s.control.createUser({ email: `u${i}@sandbox.example`, full_name: `U ${i}` }));
      await s.control.waitFor(() =>
        s.control.queues().every((q) => q.email !== SYNC || (q.parked && q.pending_events === 0)),
      );
    }
    for (const minute of ["12:01", "12:02", "12:03"]) {
      await clock.tickTo(Date.parse(`2026-11-30T${minute}:00Z`));
      const members = await humans(owner());
      if (joined.every((u) => members.includes(u.user_id))) break;
    }
    await expect.poll(() => humans(owner())).toEqual(expect.arrayContaining(joined.map((u) => u.user_id)));
    const registers = requestsSince(s, mark).filter((r) => r === "POST /register");
    expect(registers.length).toBeLessThanOrEqual(3);
  });
});

describe("org-sync, a change that failed for a passing reason", () => {
  /** Ten seconds past a whole minute: the bot checks for a retry due at each whole minute. */
  const at = (hhmm: string) => `2026-11-30T${hhmm}:00.000Z`;
  let clock: ManualClock;

  /** The org above on a test clock at 12:00:10; `fault` is set up before the bot starts. */
  async function startWith(settings: Record<string, unknown>, fault: (s: Sandbox) => void) {
    clock = new ManualClock(Date.parse("2026-11-30T12:00:10Z"));
    fault(await startOrg(clock));
    return startSync(settings, clock);
  }
  /** Every change that reached the server, `METHOD /path status`, in order. */
  const changes = () =>
    sandbox!.control.requests
      .filter((r) => /^(POST|PATCH)$/.test(r.method) && !/^\/(register|events)$/.test(r.path ?? ""))
      .map((r) => `${r.method} ${r.path} ${r.status}`);
  /** After the start's sync, move the test clock to `hhmm` (the retry's minute), then wait for `expected`. */
  async function retriedAt(hhmm: string, expected: string[]) {
    await expect.poll(() => summary().length).toBe(1);
    await clock.tickTo(Date.parse(at(hhmm)));
    await expect.poll(summaries).toEqual(expected);
  }

  it("a group add answered 503 before the server acted is made at the retry, once", async () => {
    await startWith({ group_membership: [{ group: "humans" }] }, (s) =>
      s.control.failNext(1, { status: 503, paths: [/^\/user_groups\/\d+\/members$/] }),
    );
    // The retry adds the owner; the server's user_group event (add_members) starts no sync.
    await retriedAt("12:02", [
      `org-sync: 0 of 1 change(s) applied; 1 tried again at ${at("12:02")}`,
      "org-sync: 1 of 1 change(s) applied",
    ]);
    const group = (await owner().userGroups.list()).user_groups.find((g) => g.name === "humans")!;
    expect(changes()).toEqual([
      `POST /user_groups/${group.id}/members 503`,
      `POST /user_groups/${group.id}/members 200`,
    ]);
    expect(await humans(owner())).toEqual([idOf(OWNER), idOf(MEMBER)].sort((a, b) => a - b));
    expect(running!.logged("failed for a passing reason")).toMatchObject([
      { level: 40, action: "group_members" },
    ]);
  });

  it("a folder made although its answer was a 502 is found made by the retry, not made twice; a refused change is not tried again", async () => {
    await startWith(
      { channel_folders: [{ name: "Teams" }], email_domains: [{ domain: "example.org" }] },
      (s) => {
        s.control.updateUser(SYNC, { role: "admin" }); // email domains need an owner: refused for good
        s.control.failNext(1, { status: 502, after: true, paths: ["/channel_folders/create"] });
      },
    );
    await retriedAt("12:02", [
      `org-sync: 0 of 2 change(s) applied; 1 tried again at ${at("12:02")}`,
      "org-sync: nothing to change",
    ]);
    expect(running!.logged("found made").map((l) => l.msg)).toEqual([
      'org-sync: create channel folder "Teams": found made (by the attempt whose answer failed, or meanwhile)',
    ]);
    expect(running!.logged("allow email domain").map((l) => l.level)).toEqual([50]);
    expect(changes()).toEqual(["POST /channel_folders/create 502", "POST /realm/domains 400"]);
    const { channel_folders } = await owner().request<{ channel_folders: { name: string }[] }>(
      "GET",
      "/channel_folders",
    );
    expect(channel_folders.map((f) => f.name)).toEqual(["Teams"]);
  });

  it("a 429 stops the pass; the rest waits with it until the server's retry-after has passed", async () => {
    const rust = declared.playgrounds[0]!;
    // Longer than the client waits by itself (60 s): the 429 reaches the bot at once.
    const limited = { result: "error", msg: "rate limited", code: "RATE_LIMIT_HIT", "retry-after": 150 };
    await startWith({ channel_folders: [{ name: "Teams" }], playgrounds: [rust] }, (s) =>
      s.control.failNext(1, { status: 429, body: limited, paths: ["/channel_folders/create"] }),
    );
    // 150 s after the 429 (at 12:00:10) is 12:02:40, later than the backoff's minute: the retry is at 12:03.
    await retriedAt("12:03", [
      `org-sync: 0 of 2 change(s) applied; 2 tried again at ${at("12:03")}`,
      "org-sync: 2 of 2 change(s) applied",
    ]);
    expect(changes()).toEqual([
      "POST /channel_folders/create 429",
      "POST /channel_folders/create 200",
      "POST /realm/playgrounds 200",
    ]);
  });
});
