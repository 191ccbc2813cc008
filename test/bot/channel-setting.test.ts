/**
 * Where a bot's settings name channels (`channelSetting()`), found through the shapes settings
 * schemas take: fields, lists, records, unions (the form the value passes), optional, default,
 * described, piped and lazy schemas. `bothost check` and a bot's start look these up.
 */
import { expect, it } from "vitest";
import { z } from "zod";
import { channelSetting, channelsIn } from "../../src/bot/channel-setting.ts";

const at = ["bots", "b", "settings"];

it("finds each channel setting under fields, lists, records and wrappers, with its path", () => {
  const schema = z.object({
    main: channelSetting().describe("where to post"),
    extra: z.array(channelSetting()).default([]),
    byTeam: z.record(z.string(), channelSetting(z.string().min(1))).optional(),
    notify: z.union([z.literal("off"), z.object({ channel: channelSetting() })]),
    piped: z.string().pipe(channelSetting(z.string())),
    trimmed: channelSetting().transform((c) => c),
    later: z.lazy(() => z.object({ channel: channelSetting().optional() })),
    other: z.string(),
  });
  const value = {
    main: "general",
    extra: ["a", 7],
    byTeam: { web: "web-team" },
    notify: { channel: "mod" },
    piped: "p",
    trimmed: "t",
    later: { channel: "l" },
    other: "not a channel",
  };
  expect(channelsIn(schema, schema.parse(value), at)).toEqual([
    { path: [...at, "main"], value: "general" },
    { path: [...at, "extra", 0], value: "a" },
    { path: [...at, "extra", 1], value: 7 },
    { path: [...at, "byTeam", "web"], value: "web-team" },
    { path: [...at, "notify", "channel"], value: "mod" },
    { path: [...at, "piped"], value: "p" },
    { path: [...at, "trimmed"], value: "t" },
    { path: [...at, "later", "channel"], value: "l" },
  ]);
});

it("finds none where the value takes another form of a union, or is absent", () => {
  const schema = z.object({
    notify: z.union([z.literal("off"), z.object({ channel: channelSetting() })]),
    maybe: channelSetting().optional(),
  });
  expect(channelsIn(schema, schema.parse({ notify: "off" }), at)).toEqual([]);
  expect(channelsIn(undefined, { notify: "off" }, at)).toEqual([]);
});

it("takes a channel's name or id, and refuses an empty name", () => {
  expect(channelSetting().parse(" general ")).toBe("general");
  expect(channelSetting().parse(12)).toBe(12);
  expect(channelSetting().safeParse("  ").success).toBe(false);
  expect(channelSetting().safeParse(-1).success).toBe(false);
});
