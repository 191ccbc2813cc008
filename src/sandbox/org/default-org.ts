import type { OrgInput } from "./schema.ts";

/**
 * The org used when none is given: an owner, a member, a generic bot owned by the owner, a
 * `general` channel everyone is in, and a `moderation` channel that receives message reports.
 */
export function defaultOrg(): OrgInput {
  return {
    realm: { name: "Sandbox", host: "sandbox.example", moderation_request_channel: "moderation" },
    users: [
      { email: "owner@sandbox.example", full_name: "Olive Owner", role: "owner" },
      { email: "member@sandbox.example", full_name: "Mel Member", role: "member" },
    ],
    bots: [
      {
        email: "bot@sandbox.example",
        full_name: "Sandbox Bot",
        type: "generic",
        owner: "owner@sandbox.example",
      },
    ],
    channels: [
      {
        name: "general",
        description: "Everyone is here.",
        subscribers: ["owner@sandbox.example", "member@sandbox.example", "bot@sandbox.example"],
        is_default: true,
      },
      { name: "moderation", privacy: "private", subscribers: ["owner@sandbox.example"] },
    ],
  };
}
