/**
 * A settings key a shipped bot does not know is reported at load, as the loader reports any key a
 * z.object would drop, nested objects and list items included: a misspelt optional key
 * (`timeot:` for `timeout:`) would otherwise be dropped without a word and its default used. Each
 * bot's settings, valid but for one misspelt key, loaded from one config: every bot's problem is
 * reported, at its line, with its path.
 */
import { resolve } from "node:path";
import { expect, it } from "vitest";
import { problemsLoading } from "../support/load-problems.ts";

/** Each shipped bot's settings, as one YAML flow mapping with one misspelt key, and that key's path. */
const BOTS: [bot: string, settings: string, typo: string][] = [
  ["approvals", "{ group: release-managers, timeot: 2h }", "timeot"],
  ["echo", '{ prefx: "echo: " }', "prefx"],
  ["standup", "{ group: engineering, channel: standups, timezon: Europe/Berlin }", "timezon"],
  [
    "welcome",
    '{ fallback: "Hi {{name}}", teams: [{ name: Backend, group: backend, grop: x }] }',
    "teams[0].grop",
  ],
  [
    "assistant",
    "{ base_url: http://localhost:11434/v1, model: m, per_person_hour: { call: 5 } }",
    "per_person_hour.call",
  ],
  [
    "webhook-relay",
    '{ verify: { type: bearer, token: "0123456789abcdef", header: X }, channel: dev, topic: t, content: c }',
    "verify.header",
  ],
];

it("every shipped bot reports a misspelt settings key at its line, naming its path", async () => {
  const bots = BOTS.map(
    ([bot, settings], i) =>
      `  ${bot}:\n    module: ${resolve(`bots/${bot}.ts`)}\n    email: b${i}@chat.example.org\n    api_key: abc\n    settings: ${settings}\n`,
  );
  const problems = await problemsLoading(
    `server:\n  url: https://chat.example.org\nhttp:\n  listen: 127.0.0.1:0\nbots:\n${bots.join("")}`,
  );
  expect(problems.map((p) => `${p.line} ${p.path}`)).toEqual(
    BOTS.map(([bot, , typo], i) => `${6 + i * 5 + 4} bots.${bot}.settings.${typo}`),
  );
});
