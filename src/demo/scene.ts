/**
 * The demo's scripted scene: each step acts as a person (or moves the sandbox clock) and then
 * waits until the bots have done what they should. A step that does not happen fails the demo.
 */
import type { SandboxControl } from "../sandbox/types.ts";
import type { MessageRecordView } from "./transcript.ts";

/** Ids of the org's users and channels by email and name. */
export interface Lookup {
  user(email: string): number;
  channel(name: string): number;
}

export interface SceneStep {
  title: string;
  /** Act; may return a note printed under the title. */
  act(control: SandboxControl): void | string | Promise<void | string>;
  /** Done when this returns true for the messages posted since the step began. */
  done(posted: MessageRecordView[], ids: Lookup): boolean;
  /** What was expected, for the failure message. */
  expected: string;
}

const by = (
  posted: MessageRecordView[],
  senderId: number,
  pred: (m: MessageRecordView) => boolean = () => true,
) => posted.some((m) => m.sender_id === senderId && pred(m));

export const scene: SceneStep[] = [
  {
    title: "Bob mentions the echo bot in #general",
    act: (c) => {
      c.sendAs("bob@acme.example", {
        type: "stream",
        to: "general",
        topic: "hello",
        content: "@**Echo** are you there?",
      });
    },
    done: (posted, ids) => by(posted, ids.user("echo-bot@acme.example"), (m) => m.type === "stream"),
    expected: "the echo bot answers in #general › hello",
  },
  {
    title: "Bob writes to the echo bot directly",
    act: (c) => {
      c.sendAs("bob@acme.example", {
        type: "direct",
        to: ["echo-bot@acme.example"],
        content: "Hi Echo, just us.",
      });
    },
    done: (posted, ids) => by(posted, ids.user("echo-bot@acme.example"), (m) => m.type === "private"),
    expected: "the echo bot answers the direct message",
  },
  {
    title: "Mallory floods #general with links",
    act: (c) => {
      for (let i = 1; i <= 4; i++) {
        c.sendAs("mallory@acme.example", {
          type: "stream",
          to: "general",
          topic: "deals",
          content: `Amazing deal #${i}: https://deals.example/${i}`,
        });
      }
    },
    done: (posted, ids) =>
      posted.some((m) => m.stream_id === ids.channel("moderation")) &&
      by(posted, ids.user("moderation-bot@acme.example"), (m) => m.type === "private"),
    expected: "the moderation bot reports the flood to #moderation and tells Mallory",
  },
  {
    title: "Alice asks the moderation bot which rules are on (a command)",
    act: (c) => {
      c.sendAs("alice@acme.example", {
        type: "stream",
        to: "general",
        topic: "house rules",
        content: "@**Moderation Bot** rules",
      });
    },
    done: (posted, ids) =>
      by(posted, ids.user("moderation-bot@acme.example"), (m) => m.content.startsWith("Rules that are on:")),
    expected: "the moderation bot lists its rules in #general › house rules",
  },
  {
    title: "Carol joins the organization",
    act: (c) => {
      c.createUser({
        email: "carol@acme.example",
        full_name: "Carol Newcomer",
        channels: ["general", "announcements"],
      });
    },
    done: (posted, ids) =>
      by(posted, ids.user("welcome-bot@acme.example"), (m) =>
        m.dm_user_ids.includes(ids.user("carol@acme.example")),
      ),
    expected: "the welcome bot greets Carol by direct message",
  },
  {
    title: "Monday 09:00 in Berlin: the weekly announcement comes due",
    act: async (c) => {
      const booking = await c.waitFor(
        () => c.scheduled().find((s) => (s as { content?: string }).content?.startsWith("Good morning")),
        { timeoutMs: 15_000 },
      );
      const at = (booking as { scheduled_delivery_timestamp: number }).scheduled_delivery_timestamp * 1000;
      c.advanceClock(at - c.now() + 61_000);
      return (
        `(the announcements bot booked it on the server for ${new Date(at).toISOString()}; the sandbox ` +
        "clock jumps there, and the server delivers it at its time)"
      );
    },
    done: (posted, ids) => by(posted, ids.user("announce-bot@acme.example"), (m) => m.type === "stream"),
    expected: "the server delivers the announcement the bot booked, in #announcements",
  },
];
