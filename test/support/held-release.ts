/**
 * The bot `releases` (release-bot@sandbox.example) in a gated daemon on a held clock, for the
 * tests of dialogs that wait with a progress open: what the bot said, a message's content, the
 * reactions on one.
 */
import type { startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { type GatedDaemon, startGatedDaemon } from "./gated-daemon.ts";
import { botSaid } from "./self-killing-bot.ts";

export const RELEASE_BOT = "release-bot@sandbox.example";

export interface HeldRelease {
  up: GatedDaemon;
  /** What the bot said, oldest first. */
  said(): string[];
  content(id: number): unknown;
  /** The emoji of the reactions on `message`. */
  acks(message: number): string[];
}

export async function startHeldRelease(
  definition: Parameters<typeof startInProcessDaemon>[1][string]["definition"],
): Promise<HeldRelease> {
  const up = await startGatedDaemon({
    name: "releases",
    email: RELEASE_BOT,
    fullName: "Releases",
    definition,
    extra: "handler_timeout: 1h",
    clock: new TestClock({ held: true }),
  });
  const control = up.sandbox.control;
  return {
    up,
    said: () => botSaid(up.sandbox, RELEASE_BOT),
    content: (id) => control.messages().find((m) => m.id === id)?.content,
    acks: (message) => control.messageView(message)!.reactions.map((r) => r.emoji_name),
  };
}
