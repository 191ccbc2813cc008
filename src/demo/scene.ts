/**
 * The demo's scripted scene: each step acts as a person (or moves the sandbox clock) and then
 * waits until the bots have done what they should. A step that does not happen fails the demo.
 */
import type { SandboxControl } from "../sandbox/types.ts";
import type { MessageRecordView } from "./transcript.ts";

export interface SceneStep {
  title: string;
  act(control: SandboxControl): void | Promise<void>;
  /** Done when this returns true for the messages posted since the step began. */
  done(posted: MessageRecordView[], who: (email: string) => number): boolean;
  /** What was expected, for the failure message. */
  expected: string;
}

const fromBot = (
  posted: MessageRecordView[],
  id: number,
  pred: (m: MessageRecordView) => boolean = () => true,
) => posted.some((m) => m.sender_id === id && pred(m));

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
    done: (posted, who) => fromBot(posted, who("echo-bot@acme.example"), (m) => m.type === "stream"),
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
    done: (posted, who) => fromBot(posted, who("echo-bot@acme.example"), (m) => m.type === "private"),
    expected: "the echo bot answers the direct message",
  },
];
