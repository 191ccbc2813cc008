/**
 * The moderation bot's settings as the config loader checks them: the example config's settings
 * are valid, and a bad rule field is reported at its file:line:column with its path.
 */
import { describe, expect, it } from "vitest";
import moderation from "../../../bots/moderation.ts";
import { validateBotSettings } from "../../../src/bot/validate-settings.ts";
import { isConfigError } from "../../../src/config/config-error.ts";
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
    const { config, source } = await loadConfigWithSource("test/fixtures/bots/moderation-bad-rule.yaml");
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
    expect(err.format()).not.toContain("fake-moderation-key-0042");
    expect(err.format()).toMatchInlineSnapshot(`
      "test/fixtures/bots/moderation-bad-rule.yaml:11:22 bots.moderation.settings.rules.link_flood.max_links: must be a number, not text
      test/fixtures/bots/moderation-bad-rule.yaml:12:29 bots.moderation.settings.rules.link_flood.actions[1]: must be report, { report: { reason } }, { reply: text }, { dm_sender: text } or { notify_channel: { channel, topic, content } }
      test/fixtures/bots/moderation-bad-rule.yaml:13:49 bots.moderation.settings.rules.keywords.report_type: must be one of spam, harassment, inappropriate, norms, other, not "spma": did you mean "spam"?"
    `);
  });
});
