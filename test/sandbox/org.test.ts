import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { SandboxOrgError, startSandbox } from "../../src/testing.ts";
import { basicAuth, Caller } from "../support/sandbox/fixture.ts";

const here = path.dirname(fileURLToPath(import.meta.url));

function yamlFile(text: string): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "bothost-org-")), "org.yaml");
  writeFileSync(file, text);
  return file;
}

async function orgError(org: string | object): Promise<SandboxOrgError> {
  const err = await startSandbox({ org: org as never }).then(
    async (s) => {
      await s.stop();
      throw new Error("expected the org to be rejected");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SandboxOrgError);
  return err as SandboxOrgError;
}

describe("org files", () => {
  it("loads the full example org", async () => {
    const sandbox = await startSandbox({ org: path.join(here, "fixtures/org.yaml") });
    try {
      const c = sandbox.control;
      expect(c.users().map((u) => u.email)).toEqual([
        "olive@acme.example",
        "mel@acme.example",
        "echo-bot@acme.example",
      ]);
      expect(c.apiKeyOf("olive@acme.example")).toBe("OliveOwnerKey0123456789abcdefABC");
      const owner = new Caller(sandbox.url, {
        authorization: basicAuth("olive@acme.example", c.apiKeyOf("olive@acme.example")),
      });
      const reg = await owner.register({
        fetch_event_types: [
          "realm",
          "realm_user",
          "stream",
          "realm_user_groups",
          "realm_playgrounds",
          "realm_domains",
          "channel_folders",
        ],
      });
      expect(reg.realm_name).toBe("Acme");
      expect(reg.streams.map((s: { name: string }) => s.name)).toEqual([
        "general",
        "moderation",
        "announcements",
      ]);
      expect(reg.realm_playgrounds).toHaveLength(1);
      expect(reg.realm_domains).toEqual([{ domain: "acme.example", allow_subdomains: true }]);
      expect(reg.channel_folders[0].name).toBe("Main");
      const groups = reg.realm_user_groups.filter((g: { is_system_group: boolean }) => !g.is_system_group);
      expect(
        groups.map((g: { name: string; direct_subgroup_ids: number[] }) => [
          g.name,
          g.direct_subgroup_ids.length,
        ]),
      ).toEqual([
        ["leads", 0],
        ["everyone-here", 1],
      ]);
      const me = await owner.get("/users/me");
      expect(me.body.profile_data).toEqual({ "1": { value: "Platform", rendered_value: "<p>Platform</p>" } });
      expect(me.body.timezone).toBe("Europe/Berlin");
    } finally {
      await sandbox.stop();
    }
  });

  it("generates 32-character keys when none are given", async () => {
    const sandbox = await startSandbox();
    try {
      for (const u of sandbox.control.users()) expect(u.api_key).toMatch(/^[A-Za-z0-9]{32}$/);
    } finally {
      await sandbox.stop();
    }
  });

  it("reports schema errors with the field path and line:column", async () => {
    const file = yamlFile(
      "users:\n  - email: a@x.example\n    full_name: A\n    role: wizard\n  - full_name: B\n",
    );
    const err = await orgError(file);
    expect(err.code).toBe("SANDBOX_ORG_INVALID");
    expect(err.issues).toEqual([
      `${file}:4:5 users[0].role: must be one of owner, admin, moderator, member, guest, not "wizard"`,
      `${file}:5:5 users[1].email: is missing: add it`,
    ]);
  });

  it("reports unknown fields and broken references", async () => {
    const file = yamlFile(
      [
        "realm:",
        "  moderation_request_channel: mods",
        "users:",
        "  - email: a@x.example",
        "    full_name: A",
        "    colour: blue",
        "    rol: member",
        "bots:",
        "  - email: b@x.example",
        "    full_name: B",
        "    owner: ghost@x.example",
        "channels:",
        "  - name: general",
        "    subscribers: [a@x.example, nobody@x.example]",
        "",
      ].join("\n"),
    );
    const err = await orgError(file);
    expect(err.issues).toEqual([
      `${file}:6:5 users[0].colour: unknown field; remove it or check its spelling`,
      `${file}:7:5 users[0].rol: unknown field; did you mean "role"?`,
    ]);
    // At the top level too, and in a mapping: the keys the org allows there.
    const top = await orgError(yamlFile("realm:\n  nmae: Acme\nchanels:\n  - name: general\n"));
    expect(top.issues).toEqual([
      `${top.issues[0]!.split(":")[0]}:2:3 realm.nmae: unknown field; did you mean "name"?`,
      `${top.issues[0]!.split(":")[0]}:3:1 chanels: unknown field; did you mean "channels"?`,
    ]);
    const refs = await orgError(
      yamlFile(
        [
          "realm:",
          "  moderation_request_channel: mods",
          "users:",
          "  - email: a@x.example",
          "    full_name: A",
          "bots:",
          "  - email: b@x.example",
          "    full_name: B",
          "    owner: ghost@x.example",
          "channels:",
          "  - name: general",
          "    subscribers: [a@x.example, nobody@x.example]",
          "    can_move_messages_within_channel_group: [a@x.example, role:moderators, helpers]",
          "",
        ].join("\n"),
      ),
    );
    expect(refs.issues.map((i) => i.replace(/^\S+ /, ""))).toEqual([
      'bots[0].owner: no user with email "ghost@x.example" is declared under users',
      'channels[0].subscribers[1]: no user or bot with email "nobody@x.example"',
      'channels[0].can_move_messages_within_channel_group[2]: no user, bot or user group "helpers"',
      'realm.moderation_request_channel: no channel named "mods" under channels',
    ]);
  });

  it("reports YAML syntax errors with line:column", async () => {
    const file = yamlFile("users:\n  - email: [unclosed\n");
    const err = await orgError(file);
    expect(err.issues[0]).toMatch(new RegExp(`^${file}:\\d+:\\d+ `));
  });

  it("names a file below the working folder from there, as the config's problems are named", async () => {
    const dir = mkdtempSync(path.join(process.cwd(), ".org-test-"));
    try {
      const file = path.join(dir, "org.yaml");
      writeFileSync(file, "users:\n  - email: a@sandbox.example\n    full_name: A\n    rolee: member\n");
      const err = await orgError(file);
      const shown = path.relative(process.cwd(), file);
      expect(err.message.split("\n")[0]).toBe(`Invalid sandbox org ${shown}:`);
      expect(err.issues).toEqual([`${shown}:4:5 users[0].rolee: unknown field; did you mean "role"?`]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("validates object orgs too, and names a missing file", async () => {
    const err = await orgError({ users: [{ email: "not-an-email", full_name: "X" }] });
    expect(err.issues).toEqual(["users[0].email: must be an email address (name@host)"]);
    expect(err.message).toContain("Invalid sandbox org (object):");
    const missing = await orgError("/no/such/org.yaml");
    expect(missing.issues[0]).toMatch(/^cannot read the file: /);
  });
});
