/**
 * The approvals bot's `webhook_url` setting, given a URL that is no URL (a port out of range): the
 * problem is reported at its config line, as every settings problem is, rather than the user-name
 * check behind the URL check throwing `TypeError: Invalid URL` out of the load (`bothost check`
 * and `bothost run` then said `bothost: unexpected failure: TypeError: Invalid URL` with a stack).
 */
import { resolve } from "node:path";
import { expect, it } from "vitest";
import { problemsLoading } from "../support/load-problems.ts";

it.each([
  "https://ci.example.org:99999/hooks/deploy",
  "https://ci.example.org:99999/hooks/deploy?token=a-secret-token",
  "not a url",
])("webhook_url %s is one located problem", async (url) => {
  const problems = await problemsLoading(
    [
      "server:\n  url: https://chat.example.org",
      "bots:",
      "  approvals:",
      `    module: ${resolve("bots/approvals.ts")}`,
      "    email: approvals-bot@chat.example.org",
      "    api_key: abc",
      "    settings:",
      "      group: release-managers",
      `      webhook_url: ${JSON.stringify(url)}`,
      "",
    ].join("\n"),
  );
  expect(problems.map((p) => [p.line, p.path, p.message])).toEqual([
    [
      10,
      "bots.approvals.settings.webhook_url",
      "is not a URL: write a whole address with its scheme and host (and a port up to 65535), like https://example.org/path",
    ],
  ]);
});
