/** What a message of the sandbox has shown over time, for the progress tests' crash cases. */
import type { Sandbox } from "../../../src/sandbox/types.ts";

/** Every content message `id` has shown, oldest first: its edit history, then what it shows now. */
export function versions(sandbox: Sandbox, id: number): string[] {
  const message = sandbox.control.messages().find((m) => m.id === id)!;
  const history = (message.edit_history ?? []) as { prev_content?: string }[];
  return [...history.flatMap((e) => e.prev_content ?? []).reverse(), String(message.content)];
}
