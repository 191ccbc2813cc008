import { describe, expect, it } from "vitest";
import { renderTemplate, valueAtPath } from "../../src/webhook/render-template.ts";

describe("renderTemplate", () => {
  const scope = {
    body: {
      repo: { name: "bothost" },
      commits: [{ id: "abc" }, { id: "def" }],
      n: 3,
      ok: false,
      tags: ["a", "b"],
    },
    headers: { "x-github-event": "push" },
  };

  it("substitutes paths, array indexes, numbers, booleans and JSON for objects", () => {
    expect(
      renderTemplate(
        "{{body.repo.name}}: {{ body.commits.1.id }} n={{body.n}} ok={{body.ok}} {{body.tags}} {{headers.x-github-event}}",
        scope,
      ),
    ).toBe('bothost: def n=3 ok=false ["a","b"] push');
  });

  it("renders missing values as the fallback or nothing, and never follows prototype keys", () => {
    expect(renderTemplate("[{{body.missing}}] [{{body.ref | main}}]", scope)).toBe("[] [main]");
    expect(renderTemplate("{{body.__proto__}}{{body.constructor.name}}{{body.toString}}", scope)).toBe("");
    expect(valueAtPath(scope, "body.repo.name.length")).toBeUndefined();
  });

  it("leaves text that is not a placeholder alone (no evaluation)", () => {
    expect(renderTemplate("{{ 1 + 1 }} {{body.n; process.exit()}} {single}", scope)).toBe(
      "{{ 1 + 1 }} {{body.n; process.exit()}} {single}",
    );
  });
});
