/** Deleting a message as someone, through the sandbox's HTTP route, as a moderator or an owner would. */
import { createClient } from "../../src/api/create-client.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";

/** `DELETE /messages/{id}` as `email` (with that account's key); rejects unless the server deletes it. */
export async function deleteMessageAs(sandbox: Sandbox, email: string, id: number): Promise<void> {
  const apiKey = sandbox.control.apiKeyOf(email);
  await createClient({ url: sandbox.url, email, apiKey, rateLimit: false }).messages.delete(id);
}
