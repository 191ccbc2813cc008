/** Look-ups for user-group tests: a group's id by name, a user's id by email. */
import { OWNER, type SandboxFixture } from "./fixture.ts";

export async function groupLookups(sb: SandboxFixture) {
  const groups = (await sb.as(OWNER).get("/user_groups")).body.user_groups as { id: number; name: string }[];
  const id = (name: string) => groups.find((g) => g.name === name)!.id;
  const user = (email: string) =>
    (sb.sandbox.control.users() as { email: string; user_id: number }[]).find((u) => u.email === email)!
      .user_id;
  return { id, user, groups };
}
