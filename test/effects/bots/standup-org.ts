/**
 * The org the standup bot's tests run in: an owner, Mel and Dee (the group `engineering`), the
 * bot, and the channel `standups`; and the bot's settings there (Berlin time).
 */
export const OWNER = "owner@sandbox.example";
export const MEL = "mel@sandbox.example";
export const DEE = "dee@sandbox.example";
export const BOT = "standup-bot@sandbox.example";

export const STANDUP_ORG = {
  realm: { name: "Sandbox", host: "sandbox.example" },
  users: [
    { email: OWNER, full_name: "Olive Owner", role: "owner" as const },
    { email: MEL, full_name: "Mel Member" },
    { email: DEE, full_name: "Dee Dev" },
  ],
  bots: [{ email: BOT, full_name: "Standup", type: "generic" as const, owner: OWNER }],
  channels: [{ name: "standups", subscribers: [OWNER, MEL, DEE, BOT] }],
  user_groups: [{ name: "engineering", members: [MEL, DEE] }],
};

export const settings = { group: "engineering", channel: "standups", timezone: "Europe/Berlin" };
