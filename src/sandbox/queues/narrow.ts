/**
 * The event-queue narrow: which operators a queue may narrow by, and the predicate applied to
 * each message event (case-insensitive, as the server's narrow_predicate).
 */
import { badRequest } from "../http/api-error.ts";

const SUPPORTED = new Set(["channel", "stream", "topic", "sender", "is"]);

/** Validate a register `narrow`; unsupported operators are 400 as on the server. */
export function checkEventNarrow(narrow: [string, string][]): void {
  for (const [operator, operand] of narrow) {
    if (!SUPPORTED.has(operator)) throw badRequest(`Operator ${operator} not supported.`);
    if (operator === "is" && operand === "followed") throw badRequest(`Operator ${operator} not supported.`);
  }
}

export interface NarrowMessage {
  type: "stream" | "private";
  streamName: string;
  topic: string;
  senderEmail: string;
}

export function matchesNarrow(narrow: [string, string][], msg: NarrowMessage, flags: string[]): boolean {
  return narrow.every(([operator, rawOperand]) => {
    const operand = rawOperand.toLowerCase();
    switch (operator) {
      case "channel":
      case "stream":
        return msg.type === "stream" && msg.streamName.toLowerCase() === operand;
      case "topic":
        return msg.type === "stream" && msg.topic.toLowerCase() === operand;
      case "sender":
        return msg.senderEmail.toLowerCase() === operand;
      case "is":
        if (operand === "dm" || operand === "private") return msg.type === "private";
        if (operand === "starred") return flags.includes("starred");
        if (operand === "unread") return !flags.includes("read");
        if (operand === "mentioned" || operand === "alerted") return flags.includes("mentioned");
        return true;
      default:
        return true;
    }
  });
}
