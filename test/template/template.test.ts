import { describe, expect, it } from "vitest";
import { parseTemplate, renderTemplate, valueAtPath } from "../../src/template/template.ts";

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

describe("parseTemplate", () => {
  it("lists the placeholders, the old single-brace spellings, and the template upgraded", () => {
    expect(parseTemplate("Hi {name}, {{rules}} at {{ link | nowhere }}; {{{odd}}} {not a field}")).toEqual({
      paths: ["rules", "link", "odd"],
      legacy: ["name"],
      upgraded: "Hi {{name}}, {{rules}} at {{ link | nowhere }}; {{{odd}}} {not a field}",
      problems: ["uses {name}, the old placeholder spelling: write {{name}}"],
    });
  });

  it("names each placeholder the caller does not fill, and the ones it does", () => {
    expect(parseTemplate("{{name}} {{nick}} {{body.x}}", ["name", "mention"]).problems).toEqual([
      "uses {{nick}}; the placeholders are {{name}}, {{mention}}",
      "uses {{body.x}}; the placeholders are {{name}}, {{mention}}",
    ]);
    expect(parseTemplate("{{name}} and {{mention}}", ["name", "mention"]).problems).toEqual([]);
  });

  it("names each {{ that begins no placeholder, which would be sent as it is", () => {
    expect(parseTemplate("{{{name}}} {{date at {{ a b }} {{}} {{ time | 9:00 }}").problems).toEqual([
      'has "{{date at ", which is no placeholder: write {{name}} or {{name | fallback}}',
      'has "{{ a b }}", which is no placeholder: write {{name}} or {{name | fallback}}',
      'has "{{}}", which is no placeholder: write {{name}} or {{name | fallback}}',
    ]);
  });

  it("renders an upgraded old-style template as the new spelling would", () => {
    const { upgraded } = parseTemplate("Welcome, {name} ({mention})");
    expect(renderTemplate(upgraded, { name: "Ada", mention: "@_**Ada|3**" })).toBe(
      "Welcome, Ada (@_**Ada|3**)",
    );
  });
});
