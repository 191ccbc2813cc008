/**
 * Each sandbox is an organization of its own, told apart as a client tells real ones apart: by
 * the `realm_uuid` and `realm_date_created` of the register response's realm state. A data file
 * keeps them; a feature level before 466 sends no `realm_uuid`, as such a server does not.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach } from "vitest";
import type { Sandbox, SandboxOptions } from "../../src/sandbox/types.ts";
import { BOT, expect, fixtureFor, OWNER, recordingSandbox, test } from "../support/sandbox/fixture.ts";

const UUID4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const opened: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of opened.splice(0).reverse()) await close();
});

async function sandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const s = await recordingSandbox(options);
  opened.push(() => s.stop());
  return s;
}

async function realm(s: Sandbox, fetch: string[] = ["realm"]) {
  const body = await fixtureFor(s)
    .as(BOT)
    .register({ event_types: ["heartbeat"], fetch_event_types: fetch });
  return {
    uuid: body.realm_uuid as string | undefined,
    created: body.realm_date_created as number | undefined,
  };
}

test("every sandbox reports its own realm_uuid, with realm in the fetch set only", async () => {
  const [a, b] = [await sandbox(), await sandbox()];
  const ra = await realm(a);
  expect(ra.uuid).toMatch(UUID4);
  expect(typeof ra.created).toBe("number");
  expect(await realm(a)).toEqual(ra);
  expect((await realm(b)).uuid).not.toBe(ra.uuid);
  expect(await realm(a, [])).toEqual({ uuid: undefined, created: undefined });
});

test("a data file keeps the organization's identity across restarts", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-realm-"));
  opened.push(() => rm(dir, { recursive: true, force: true }));
  const dataFile = path.join(dir, "data.json");
  const first = await recordingSandbox({ dataFile });
  const before = await realm(first);
  await first.stop();
  expect(await realm(await sandbox({ dataFile }))).toEqual(before);
});

test("below feature level 466 there is no realm_uuid, as on such a server", async () => {
  const old = await sandbox({
    org: {
      realm: { name: "Old", host: "sandbox.example", feature_level: 465 },
      users: [{ email: OWNER, full_name: "Olive Owner", role: "owner" }],
      bots: [{ email: BOT, full_name: "Bot", owner: OWNER }],
    },
  });
  const r = await realm(old);
  expect(r.uuid).toBeUndefined();
  expect(typeof r.created).toBe("number");
});
