/**
 * The org of the outgoing-webhook tests: an owner, a member, and an outgoing-webhook bot whose
 * URL is bothost's listener on a port chosen before the daemon starts.
 */
import type { OrgInput } from "../../src/sandbox/types.ts";

export const TOKEN = "T".repeat(32);
export const HELPER = "helper-bot@x.example";
export const MEL = "mel@x.example";

/** Helper, pointed at `http://127.0.0.1:<port>/hooks/helper`, in channel general with Olive and Mel. */
export function outgoingOrg(port: number, iface: "zulip" | "slack" = "zulip"): OrgInput {
  return {
    users: [
      { email: "olive@x.example", full_name: "Olive", role: "owner" },
      { email: MEL, full_name: "Mel" },
    ],
    bots: [
      {
        email: HELPER,
        full_name: "Helper",
        type: "outgoing",
        owner: "olive@x.example",
        outgoing: { url: `http://127.0.0.1:${port}/hooks/helper`, token: TOKEN, interface: iface },
      },
    ],
    channels: [{ name: "general", subscribers: ["olive@x.example", MEL, HELPER] }],
  };
}
