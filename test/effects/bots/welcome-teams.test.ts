/**
 * The welcome bot's team question (bots/welcome/teams.ts) against the sandbox over HTTP: a new
 * member is greeted, asked which team they join, and added to that team's user group; when the bot
 * may not change the group, the administrators are told what to change.
 * It imports "bothost", which resolves to dist/: run `npm run build` first (`npm test` does).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import welcome from "../../../bots/welcome.ts";
import { createClient } from "../../../src/api/create-client.ts";
import { startBots } from "../../support/bot-daemon.ts";
import { useSandbox } from "../../support/sandbox-fixture.ts";

const BOT = "welcome-bot@sandbox.example";
const OWNER = "owner@sandbox.example";
const ADMIN = "admin@sandbox.example";
const LEAD = "lead@sandbox.example";

/** Called with each answer the sandbox gives (a test may fail a later request from it). */
let onResponse: ((r: { method: string; route: string | null; status: number }) => void) | undefined;

const world = useSandbox({
  onResponse: (r) => onResponse?.(r),
  org: {
    realm: { name: "Sandbox", host: "sandbox.example" },
    users: [
      { email: OWNER, full_name: "Olive Owner", role: "owner" },
      { email: ADMIN, full_name: "Ada Admin", role: "admin" },
      { email: LEAD, full_name: "Lee Lead" },
    ],
    bots: [{ email: BOT, full_name: "Welcome", type: "generic", owner: OWNER }],
    channels: [{ name: "general", subscribers: [OWNER, ADMIN, LEAD, BOT], is_default: true }],
    user_groups: [
      { name: "backend", members: [LEAD], can_add_members_group: [BOT] },
      { name: "design", members: [] },
    ],
  },
});

const TEAMS = [
  { name: "Backend", group: "backend" },
  { name: "Design", group: "design" },
  { name: "Ops", group: "ops" },
];
const start = (settings: Record<string, unknown> = {}, stateDir?: string) =>
  startBots(
    world.sandbox,
    {
      welcome: {
        email: BOT,
        definition: welcome,
        settings: { fallback: "Hi {{name}}!", teams: TEAMS, ...settings },
      },
    },
    stateDir ? { stateDir } : {},
  ).then((running) => world.stopAfter(running));

/** The bot's direct messages whose recipients are exactly `emails` (and the bot). */
const dmsTo = (...emails: string[]) => {
  const ids = [...emails.map((e) => world.idOf(e)), world.idOf(BOT)].sort((a, b) => a - b);
  return world
    .messagesFrom(BOT)
    .filter(
      (m) =>
        m.type === "private" &&
        JSON.stringify([...(m.dm_user_ids as number[])].sort((a, b) => a - b)) === JSON.stringify(ids),
    )
    .map((m) => m.content as string);
};
const say = (email: string, content: string) =>
  world.sandbox.control.sendAs(email, { type: "direct", to: [BOT], content });
/** A group's members' emails, as the server lists them (GET /user_groups as the owner). */
const membersOf = async (name: string) => {
  const owner = createClient({
    url: world.sandbox.url,
    email: OWNER,
    apiKey: world.sandbox.control.apiKeyOf(OWNER),
  });
  const group = (await owner.userGroups.list()).user_groups.find((g) => g.name === name)!;
  return world.sandbox.control
    .users()
    .filter((u) => group.members.includes(u.user_id))
    .map((u) => u.email)
    .sort();
};
const QUESTION = "Which team do you join? **Backend**, **Design**, **Ops** (answer with the name).";
/** The bot's next POST /messages after one that succeeded (the greeting's) is refused, once. */
const refuseAfterGreeting = () => {
  onResponse = (r) => {
    if (r.method !== "POST" || r.route !== "/messages" || r.status !== 200) return;
    onResponse = undefined;
    world.sandbox.control.failNext(1, { status: 503, paths: [/^\/messages$/], methods: ["POST"] });
  };
};
/** `email` got `greeting` once, then the question; their answer adds them to Backend. */
const askedAloneThenJoins = async (email: string, greeting: string) => {
  await expect.poll(() => dmsTo(email)).toEqual([greeting, QUESTION]);
  say(email, "Backend");
  await expect.poll(() => dmsTo(email).at(-1)).toMatch(/^Welcome to Backend!/);
};

describe("the welcome bot's team question", () => {
  it("asks a new member after the greeting and adds them to the group they answer", async () => {
    await start();
    const kim = world.sandbox.control.createUser({ email: "kim@sandbox.example", full_name: "Kim" });
    await expect.poll(() => dmsTo(kim.email)).toEqual(["Hi Kim!", QUESTION]);
    say(kim.email, "backend");
    await expect
      .poll(() => dmsTo(kim.email).at(-1))
      .toBe("Welcome to Backend! You are now in the group @_*backend*.");
    expect(await membersOf("backend")).toEqual([kim.email, LEAD].sort());
    // Answered: a later message is no answer, and goes to the commands as usual.
    say(kim.email, "design");
    await expect.poll(() => dmsTo(kim.email).at(-1)).toMatch(/^I don't know the command `design`/);
  });

  it("asks again with ctx.prompt after an answer that names no team", async () => {
    await start();
    const lou = world.sandbox.control.createUser({ email: "lou@sandbox.example", full_name: "Lou" });
    await expect.poll(() => dmsTo(lou.email)).toHaveLength(2);
    say(lou.email, "marketing");
    await expect.poll(() => dmsTo(lou.email).at(-1)).toBe(`I don't know the team "marketing". ${QUESTION}`);
    say(lou.email, "**Backend**");
    await expect.poll(() => dmsTo(lou.email).at(-1)).toMatch(/^Welcome to Backend!/);
    expect(await membersOf("backend")).toContain(lou.email);
  });

  it("takes `team <name>` said while its question waits as that team, not as an unknown team", async () => {
    await start();
    const ann = world.sandbox.control.createUser({ email: "ann@sandbox.example", full_name: "Ann" });
    await expect.poll(() => dmsTo(ann.email)).toHaveLength(2);
    say(ann.email, "marketing");
    await expect.poll(() => dmsTo(ann.email).at(-1)).toBe(`I don't know the team "marketing". ${QUESTION}`);
    say(ann.email, "team backend");
    await expect.poll(() => dmsTo(ann.email).at(-1)).toMatch(/^Welcome to Backend!/);
  });
  it("tells the member and every administrator and owner when it may not change the group", async () => {
    await start();
    const max = world.sandbox.control.createUser({ email: "max@sandbox.example", full_name: "Max" });
    await expect.poll(() => dmsTo(max.email)).toHaveLength(2);
    say(max.email, "Design");
    await expect
      .poll(() => dmsTo(max.email).at(-1))
      .toBe("I may not add you to Design myself; I've asked an administrator to.");
    // The member is answered first, the administrators told after.
    await expect.poll(() => dmsTo(OWNER, ADMIN)).toHaveLength(1);
    const [note, ...more] = dmsTo(OWNER, ADMIN);
    expect(more).toEqual([]);
    expect(note).toContain(
      `@_**Max|${max.user_id}** joins **Design**, but I may not add members to the user group "design"`,
    );
    expect(note).toContain('"Who can add members to this group" (can_add_members_group)');
    expect(await membersOf("design")).toEqual([]);
    // A team whose group does not exist: the administrators are told to create it.
    say(max.email, "team ops");
    await expect
      .poll(() => dmsTo(max.email).at(-1))
      .toBe("I can't find the group of Ops; I've told the administrators.");
    // The member is answered first, the administrators told after.
    await expect.poll(() => dmsTo(OWNER, ADMIN).at(-1)).toMatch(/user group "ops", which does not exist/);
  });

  it("tells the `notify` people instead, and takes `team <name>` from anyone", async () => {
    await start({ notify: [LEAD] });
    say(OWNER, "team design");
    await expect
      .poll(() => dmsTo(OWNER).at(-1))
      .toBe("I may not add you to Design myself; I've asked an administrator to.");
    await expect.poll(() => dmsTo(LEAD)).toEqual([expect.stringContaining("joins **Design**")]);
    expect(dmsTo(OWNER, ADMIN)).toEqual([]);
    say(ADMIN, "team Backend");
    await expect.poll(() => dmsTo(ADMIN).at(-1)).toMatch(/^Welcome to Backend!/);
    say(LEAD, "team backend");
    await expect.poll(() => dmsTo(LEAD).at(-1)).toBe("You are in Backend already.");
  });

  it("a `notify` email that names nobody: the others are told, or the administrators, and the entry is logged", async () => {
    const running = await start({ notify: ["it-dsk@sandbox.example"] });
    say(LEAD, "team design");
    await expect
      .poll(() => dmsTo(LEAD).at(-1))
      .toBe("I may not add you to Design myself; I've asked an administrator to.");
    await expect.poll(() => dmsTo(OWNER, ADMIN)).toEqual([expect.stringContaining("joins **Design**")]);
    expect(running.logged("notify[0]: it-dsk@sandbox.example")).toHaveLength(1);
  });

  it("a `notify` email that names nobody is said as the bot starts, by its setting", async () => {
    const running = await start({ notify: [LEAD, "it-dsk@sandbox.example"] });
    await expect
      .poll(() => running.logged("names no user the bot can see"))
      .toEqual([
        expect.objectContaining({
          level: 40,
          settings: ["bots.welcome.settings.notify[1]"],
          msg: 'bots.welcome.settings.notify[1]: "it-dsk@sandbox.example" names no user the bot can see: check the address (or give the user\'s id); where emails are hidden, give the one the server shows.',
        }),
      ]);
  });

  it("takes the answer after a restart: the question waits in the bot's state", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "bothost-welcome-teams-"));
    try {
      const first = await start({}, stateDir);
      const nia = world.sandbox.control.createUser({ email: "nia@sandbox.example", full_name: "Nia" });
      await expect.poll(() => dmsTo(nia.email)).toHaveLength(2);
      await first.stop();
      await start({}, stateDir);
      say(nia.email, "Backend");
      await expect.poll(() => dmsTo(nia.email).at(-1)).toMatch(/^Welcome to Backend!/);
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });

  it("takes the second chance's answer after a restart: that prompt is a dialog, kept in the state too", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "bothost-welcome-teams-"));
    try {
      const first = await start({}, stateDir);
      const ode = world.sandbox.control.createUser({ email: "ode@sandbox.example", full_name: "Ode" });
      await expect.poll(() => dmsTo(ode.email)).toHaveLength(2);
      say(ode.email, "marketing");
      await expect.poll(() => dmsTo(ode.email).at(-1)).toBe(`I don't know the team "marketing". ${QUESTION}`);
      await first.stop();
      say(ode.email, "Backend");
      await start({}, stateDir);
      await expect.poll(() => dmsTo(ode.email).at(-1)).toMatch(/^Welcome to Backend!/);
      expect(dmsTo(ode.email)).toHaveLength(4);
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });

  it("a team question that fails at a start's catch-up: greeted once, asked at the next start", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "bothost-welcome-teams-"));
    try {
      let running = await start({}, stateDir);
      const since = () => running.context().state.get("greeting-since");
      await expect.poll(since).toEqual(expect.any(Number));
      await running.stop();
      world.sandbox.control.expireQueue({ email: BOT }); // the add event below reaches no queue
      const kim = world.sandbox.control.createUser({ email: "kim@sandbox.example", full_name: "Kim" });
      // The greeting goes out; the question after it is refused.
      refuseAfterGreeting();
      running = await start({}, stateDir);
      await expect
        .poll(() => running.logged("could not greet a member who joined while the bot was down"))
        .toHaveLength(1);
      expect(dmsTo(kim.email)).toEqual(["Hi Kim!"]);
      await running.stop();
      running = await start({}, stateDir);
      await askedAloneThenJoins(kim.email, "Hi Kim!");
    } finally {
      onResponse = undefined;
      await rm(stateDir, { recursive: true, force: true });
    }
  });

  it("a team question that fails in the new member's event: the retry asks it, the greeting goes out once", async () => {
    const running = world.stopAfter(
      await startBots(world.sandbox, {
        welcome: {
          email: BOT,
          definition: welcome,
          settings: { fallback: "Hi {{name}}!", teams: TEAMS },
          extra: "retries: { attempts: 3, backoff: 50ms, max_backoff: 50ms }",
        },
      }),
    );
    refuseAfterGreeting();
    const lia = world.sandbox.control.createUser({ email: "lia@sandbox.example", full_name: "Lia" });
    await expect.poll(() => dmsTo(lia.email)).toEqual(["Hi Lia!", QUESTION]);
    await expect.poll(() => running.logged("handler succeeded on a later attempt")).toHaveLength(1);
    expect(dmsTo(lia.email)).toEqual(["Hi Lia!", QUESTION]);
  });

  it("a team question that fails at every attempt of the new member's event: the next start asks it alone", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "bothost-welcome-teams-"));
    const bots = {
      welcome: {
        email: BOT,
        definition: welcome,
        settings: { fallback: "Hi {{name}}!", teams: TEAMS },
        extra: "retries: { attempts: 1 }",
      },
    };
    try {
      let running = world.stopAfter(await startBots(world.sandbox, bots, { stateDir }));
      await expect.poll(() => running.context().state.get("greeting-since")).toEqual(expect.any(Number));
      // The greeting goes out; the question after it is refused, and the event is kept as a dead letter.
      refuseAfterGreeting();
      const ned = world.sandbox.control.createUser({ email: "ned@sandbox.example", full_name: "Ned" });
      await expect.poll(() => running.logged("handler failed (every attempt failed)")).toHaveLength(1);
      expect(dmsTo(ned.email)).toEqual(["Hi Ned!"]);
      await running.stop();
      // The start's catch-up finds the member's question owed: asked alone, no second greeting.
      running = world.stopAfter(await startBots(world.sandbox, bots, { stateDir }));
      await askedAloneThenJoins(ned.email, "Hi Ned!");
    } finally {
      onResponse = undefined;
      await rm(stateDir, { recursive: true, force: true });
    }
  });

  it("refuses a notify list that is no list of emails", () => {
    const parse = (v: unknown) =>
      (welcome.settings as { safeParse(v: unknown): { error?: { issues: unknown[] } } }).safeParse(v);
    expect(parse({ fallback: "Hi", teams: TEAMS, notify: ["ops"] }).error?.issues).toMatchObject([
      { path: ["notify", 0] },
    ]);
    expect(parse({ fallback: "Hi", teams: [{ name: "", group: "x" }] }).error?.issues).toMatchObject([
      { path: ["teams", 0, "name"] },
    ]);
  });
});
