/**
 * The moderation bot's settings as the config loader checks them: the example config's settings
 * are valid, and a bad rule field is reported at its file:line:column with its path.
 */
import { describe, expect, it } from "vitest";
import moderation from "../../../bots/moderation.ts";
import { validateBotSettings } from "../../../src/bot/validate-settings.ts";
import { type ConfigError, isConfigError } from "../../../src/config/config-error.ts";
import { loadConfigWithSource } from "../../../src/config/load-config.ts";

describe("the moderation bot's settings in a config file", () => {
  it("config.example.yaml's moderator settings pass the bot's schema", async () => {
    const { config, source } = await loadConfigWithSource("config.example.yaml", {
      env: {
        MODERATION_BOT_API_KEY: "fake-key-0040",
        STANDUP_BOT_API_KEY: "fake-key-0042",
        ASSISTANT_BOT_API_KEY: "fake-key-0043",
        ECHO_BOT_API_KEY: "fake-key-0041",
      },
    });
    const settings = await validateBotSettings(
      "moderator",
      moderation,
      config.bots.moderator?.settings,
      source,
    );
    expect(settings).toMatchObject({
      rules: {
        link_flood: {
          max_links: 5,
          actions: ["report", { reply: "Please keep it to a few links, {{name}}." }],
        },
        mention_storm: { max_user_mentions: 10, wildcards: true },
      },
    });
  });

  // A report type the server does not offer (a typo) is refused here, not by every report made.
  it("name a bad rule field at its line, with the field's path", async () => {
    const err = await settingsErrorOf("test/fixtures/bots/moderation-bad-rule.yaml");
    expect(err.format()).not.toContain("fake-moderation-key-0042");
    expect(err.format()).toMatchInlineSnapshot(`
      "test/fixtures/bots/moderation-bad-rule.yaml:11:22 bots.moderation.settings.rules.link_flood.max_links: must be a number, not text
      test/fixtures/bots/moderation-bad-rule.yaml:12:29 bots.moderation.settings.rules.link_flood.actions[1]: must be report, { report: { reason } }, { reply: text }, { dm_sender: text } or { notify_channel: { channel, topic, content } }
      test/fixtures/bots/moderation-bad-rule.yaml:13:49 bots.moderation.settings.rules.keywords.report_type: must be one of spam, harassment, inappropriate, norms, other, not "spma": did you mean "spam"?"
    `);
  });

  // Bounds are said as bounds ("must be at least 1"), not in zod's "Too small: expected number to be >=1".
  it("name each bad value in the project's words", async () => {
    const err = await settingsErrorOf("test/fixtures/bots/moderation-bad-values.yaml");
    expect(err.format()).toMatchInlineSnapshot(`
      "test/fixtures/bots/moderation-bad-values.yaml:9:20 bots.moderation.settings.check_edits: must be true or false, not text
      test/fixtures/bots/moderation-bad-values.yaml:10:22 bots.moderation.settings.notify_sender: is empty: give it some text
      test/fixtures/bots/moderation-bad-values.yaml:11:25 bots.moderation.settings.exempt.roles[0]: must be one of owner, admin, moderator, member, guest, not "admn": did you mean "admin"?
      test/fixtures/bots/moderation-bad-values.yaml:11:43 bots.moderation.settings.exempt.channels[0]: is empty: give it some text
      test/fixtures/bots/moderation-bad-values.yaml:11:56 bots.moderation.settings.exempt.users[0]: must be more than 0
      test/fixtures/bots/moderation-bad-values.yaml:13:32 bots.moderation.settings.rules.flood.max_messages: must be at least 1
      test/fixtures/bots/moderation-bad-values.yaml:13:48 bots.moderation.settings.rules.flood.per_seconds: must be a whole number, not a fractional number
      test/fixtures/bots/moderation-bad-values.yaml:15:25 bots.moderation.settings.rules.cross_post.min_channels: must be at least 2
      test/fixtures/bots/moderation-bad-values.yaml:16:23 bots.moderation.settings.rules.cross_post.min_length: must be a number, not .nan
      test/fixtures/bots/moderation-bad-values.yaml:18:17 bots.moderation.settings.rules.cross_post.actions[0].notify_channel.content: is missing: add it
      test/fixtures/bots/moderation-bad-values.yaml:19:24 bots.moderation.settings.rules.cross_post.actions[1].reply: must be text, not a whole number
      test/fixtures/bots/moderation-bad-values.yaml:20:27 bots.moderation.settings.rules.cross_post.actions[2].report.reson: is not a known key: did you mean "reason"?
      test/fixtures/bots/moderation-bad-values.yaml:21:59 bots.moderation.settings.rules.cross_post.actions[3].notify_channel.topc: is not a known key: did you mean "topic"?
      test/fixtures/bots/moderation-bad-values.yaml:22:15 bots.moderation.settings.rules.cross_post.actions[4]: holds 2 actions (reply, dm_sender): give each its own entry in the list
      test/fixtures/bots/moderation-bad-values.yaml:23:45 bots.moderation.settings.rules.repeated_message.within_seconds: must be at least 1
      test/fixtures/bots/moderation-bad-values.yaml:23:61 bots.moderation.settings.rules.repeated_message.min_length: must be at least 1
      test/fixtures/bots/moderation-bad-values.yaml:23:77 bots.moderation.settings.rules.repeated_message.max_repeats: must be a number, not infinity
      test/fixtures/bots/moderation-bad-values.yaml:24:51 bots.moderation.settings.rules.new_member_links.min_account_age_days: must be more than 0
      test/fixtures/bots/moderation-bad-values.yaml:25:34 bots.moderation.settings.rules.link_flood.max_links: must be at least 1
      test/fixtures/bots/moderation-bad-values.yaml:25:62 bots.moderation.settings.rules.link_flood.per_sender.max_links: must be at least 1
      test/fixtures/bots/moderation-bad-values.yaml:25:81 bots.moderation.settings.rules.link_flood.per_sender.within_seconds: must be at least 1
      test/fixtures/bots/moderation-bad-values.yaml:25:95 bots.moderation.settings.rules.link_flood.actions: is an empty list: list at least one
      test/fixtures/bots/moderation-bad-values.yaml:26:28 bots.moderation.settings.rules.keywords.words: is an empty list: list at least one
      test/fixtures/bots/moderation-bad-values.yaml:29:15 bots.moderation.settings.rules.blocked_patterns.patterns[0]: is empty: give it some text
      test/fixtures/bots/moderation-bad-values.yaml:30:36 bots.moderation.settings.rules.blocked_patterns.patterns[1].flags: may only use the flags i, m, s, u and v: x is not a flag; g would make each test depend on the one before
      test/fixtures/bots/moderation-bad-values.yaml:31:36 bots.moderation.settings.rules.blocked_patterns.patterns[2].flags: has i more than once
      test/fixtures/bots/moderation-bad-values.yaml:32:37 bots.moderation.settings.rules.blocked_patterns.patterns[3].name: is empty: give it some text
      test/fixtures/bots/moderation-bad-values.yaml:33:36 bots.moderation.settings.rules.blocked_patterns.patterns[4].flags: may only use the flags i, m, s, u and v: x and z are not flags
      test/fixtures/bots/moderation-bad-values.yaml:34:36 bots.moderation.settings.rules.blocked_patterns.patterns[5].flags: has both u and v: keep one (v is u with set notation)
      test/fixtures/bots/moderation-bad-values.yaml:36:30 bots.moderation.settings.rules.mass_mentions.max_user_mentions: must be at least 1
      test/fixtures/bots/moderation-bad-values.yaml:37:21 bots.moderation.settings.rules.mass_mentions.actions[0]: must be report, { report: { reason } }, { reply: text }, { dm_sender: text } or { notify_channel: { channel, topic, content } }: did you mean "report"?
      test/fixtures/bots/moderation-bad-values.yaml:37:38 bots.moderation.settings.rules.mass_mentions.actions[1].reply: is empty: give it some text
      test/fixtures/bots/moderation-bad-values.yaml:37:73 bots.moderation.settings.rules.mass_mentions.actions[2].notify_channel.channel: is empty: give it some text
      test/fixtures/bots/moderation-bad-values.yaml:37:93 bots.moderation.settings.rules.mass_mentions.actions[3]: must be report, { report: { reason } }, { reply: text }, { dm_sender: text } or { notify_channel: { channel, topic, content } }: did you mean "report"?"
    `);
  });
});

/** The error the moderation bot's settings in `file` are refused with. */
async function settingsErrorOf(file: string): Promise<ConfigError> {
  const { config, source } = await loadConfigWithSource(file);
  const err = await validateBotSettings(
    "moderation",
    moderation,
    config.bots.moderation?.settings,
    source,
  ).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isConfigError(err)) throw new Error(`expected a ConfigError, got ${String(err)}`);
  return err;
}
