/** The testing kit's `react`: a person's reaction made through the sandbox's own HTTP route. */
import type { Sandbox } from "../sandbox/types.ts";

/** A person's reaction through the sandbox's HTTP route, as their client would make it. */
export async function reactAs(sandbox: Sandbox, email: string, id: number, emoji: string, remove: boolean) {
  const key = sandbox.control.apiKeyOf(email);
  const res = await fetch(`${sandbox.url}/api/v1/messages/${id}/reactions`, {
    method: remove ? "DELETE" : "POST",
    headers: {
      authorization: `Basic ${Buffer.from(`${email}:${key}`).toString("base64")}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ emoji_name: emoji }).toString(),
  });
  if (res.ok) return;
  const body = (await res.json().catch(() => ({}))) as { msg?: string; code?: string };
  const what = `${remove ? "removing" : "adding"} ${emoji} on message ${id} as ${email}`;
  throw new Error(`react: ${what} was refused: ${body.msg ?? res.statusText} (${body.code ?? res.status})`);
}
