/**
 * A user group's membership changed as a person does it on the server: over the sandbox's HTTP
 * interface (`POST /user_groups/{id}/members`), so that the bots see what the server sends.
 */
import { expect } from "vitest";
import type { Sandbox } from "../../src/sandbox/types.ts";

/** `who` (an email) joins group `group` (by name), added by `by` (an email, with the right to). */
export async function addToGroup(sandbox: Sandbox, group: string, who: string, by: string): Promise<void> {
  const auth = `Basic ${Buffer.from(`${by}:${sandbox.control.apiKeyOf(by)}`).toString("base64")}`;
  const listed = await fetch(`${sandbox.url}/api/v1/user_groups`, { headers: { authorization: auth } });
  const { user_groups } = (await listed.json()) as { user_groups: { id: number; name: string }[] };
  const id = user_groups.find((g) => g.name === group)!.id;
  const userId = sandbox.control.users().find((u) => u.email === who)!.user_id;
  const added = await fetch(`${sandbox.url}/api/v1/user_groups/${id}/members`, {
    method: "POST",
    headers: { authorization: auth, "content-type": "application/x-www-form-urlencoded" },
    body: `add=${encodeURIComponent(JSON.stringify([userId]))}`,
  });
  expect(added.status).toBe(200);
}
