/**
 * The org of the deploy-approval tests: a requester and two release managers in #ops, the
 * requester a member of `release-managers` too (a request is still not theirs to approve), and the
 * approvals bot's account (`@**Approvals**`).
 */
import type { OrgInput } from "../../src/sandbox/org/schema.ts";

export const OWNER = "owner@sandbox.example";
export const REQ = "rae@sandbox.example";
export const RITA = "rita@sandbox.example";
export const RON = "ron@sandbox.example";
export const BOT = "approvals-bot@sandbox.example";

export const RELEASE_ORG: OrgInput = {
  realm: { name: "Sandbox", host: "sandbox.example" },
  users: [
    { email: OWNER, full_name: "Olive Owner", role: "owner" },
    { email: REQ, full_name: "Rae Requester" },
    { email: RITA, full_name: "Rita Release" },
    { email: RON, full_name: "Ron Release" },
  ],
  bots: [{ email: BOT, full_name: "Approvals", type: "generic", owner: OWNER }],
  channels: [{ name: "ops", subscribers: [OWNER, REQ, RITA, RON, BOT] }],
  user_groups: [{ name: "release-managers", members: [REQ, RITA, RON] }],
};
