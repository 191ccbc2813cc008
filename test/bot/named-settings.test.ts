/**
 * Where a bot's settings name channels (`channelSetting()`) and user groups (`groupSetting()`), found through the shapes settings
 * schemas take: fields, lists, records, unions (the form the value passes), optional, default,
 * described, preprocessed, transformed and lazy schemas. `bothost check` and a bot's start look these up.
 */
import { expect, it } from "vitest";
import { z } from "zod";
import { channelSetting, groupSetting, namedIn } from "../../src/bot/named-settings.ts";

const at = ["bots", "b", "settings"];

it("finds each channel setting under fields, lists, records and wrappers, with its path", () => {
  const schema = z.object({
    main: channelSetting().describe("where to post"),
    extra: z.array(channelSetting()).default([]),
    byTeam: z.record(z.string(), channelSetting(z.string().min(1))).optional(),
    notify: z.union([z.literal("off"), z.object({ channel: channelSetting() })]),
    preprocessed: z.preprocess((v) => v, channelSetting()),
    trimmed: channelSetting().transform((c) => c),
    later: z.lazy(() => z.object({ channel: channelSetting().optional() })),
    approvers: groupSetting(z.string().min(1)),
    other: z.string(),
  });
  const value = {
    main: "general",
    extra: ["a", 7],
    byTeam: { web: "web-team" },
    notify: { channel: "mod" },
    preprocessed: "p",
    trimmed: "t",
    later: { channel: "l" },
    approvers: "release-managers",
    other: "not a channel",
  };
  expect(namedIn(schema, schema.parse(value), at)).toEqual([
    { kind: "channel", path: [...at, "main"], value: "general" },
    { kind: "channel", path: [...at, "extra", 0], value: "a" },
    { kind: "channel", path: [...at, "extra", 1], value: 7 },
    { kind: "channel", path: [...at, "byTeam", "web"], value: "web-team" },
    { kind: "channel", path: [...at, "notify", "channel"], value: "mod" },
    { kind: "channel", path: [...at, "preprocessed"], value: "p" },
    { kind: "channel", path: [...at, "trimmed"], value: "t" },
    { kind: "channel", path: [...at, "later", "channel"], value: "l" },
    { kind: "group", path: [...at, "approvers"], value: "release-managers" },
  ]);
});

it("finds none where the value takes another form of a union, or is absent", () => {
  const schema = z.object({
    notify: z.union([z.literal("off"), z.object({ channel: channelSetting() })]),
    maybe: channelSetting().optional(),
  });
  expect(namedIn(schema, schema.parse({ notify: "off" }), at)).toEqual([]);
  expect(namedIn(undefined, { notify: "off" }, at)).toEqual([]);
});

it("takes a channel's name or id, and refuses an empty name", () => {
  expect(channelSetting().parse(" general ")).toBe("general");
  expect(channelSetting().parse(12)).toBe(12);
  expect(channelSetting().safeParse("  ").success).toBe(false);
  expect(channelSetting().safeParse(-1).success).toBe(false);
});
