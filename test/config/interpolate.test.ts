// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are ${VAR} references under test.
import { describe, expect, it } from "vitest";
import { interpolate } from "../../src/config/yaml-to-value.ts";

describe("interpolate", () => {
  it("replaces ${VAR} and ${VAR:-default}", () => {
    expect(interpolate("${HOST:-localhost}:${PORT}", { PORT: "8080" })).toEqual({
      value: "localhost:8080",
      variables: ["HOST", "PORT"],
      problems: [],
    });
  });

  it("uses the default for an empty variable, but keeps an empty value without one", () => {
    expect(interpolate("[${A:-x}][${A}]", { A: "" }).value).toBe("[x][]");
  });

  it("allows a default with colons, spaces and dashes", () => {
    expect(interpolate("${URL:-https://a.example:8443/x y-z}", {}).value).toBe(
      "https://a.example:8443/x y-z",
    );
  });

  it("keeps $${ as a literal ${ and a lone $ as is", () => {
    expect(interpolate("$${A} costs $5 and $$", { A: "no" }).value).toBe("${A} costs $5 and $$");
  });

  it("does not scan substituted values again", () => {
    expect(interpolate("${A}", { A: "${B}", B: "secret" }).value).toBe("${B}");
  });

  it("names unset variables without printing any value", () => {
    const result = interpolate("${SET} ${UNSET}", { SET: "value-of-set" });
    expect(result.problems).toEqual([
      "environment variable UNSET is not set: set it before starting bothost, or write ${UNSET:-default} to give a default",
    ]);
    expect(result.problems.join()).not.toContain("value-of-set");
  });

  it.each([
    ["${A", "has a ${ without a closing }: close it, or write $${ for a literal ${"],
    [
      "${1A}",
      "has a ${…} that is not a variable name: names are letters, digits and _, not starting with a digit (write $${ for a literal ${)",
    ],
    [
      "${}",
      "has a ${…} that is not a variable name: names are letters, digits and _, not starting with a digit (write $${ for a literal ${)",
    ],
    ["${A:?required}", "uses an unsupported ${…} form: only ${NAME} and ${NAME:-default} are supported"],
    ["${A-x}", "uses an unsupported ${…} form: only ${NAME} and ${NAME:-default} are supported"],
    ["${A:-${B}}", "nests a ${…} inside the default of A: defaults are plain text"],
  ])("reports %s", (text, problem) => {
    expect(interpolate(text, { A: "a", B: "b" }).problems).toEqual([problem]);
  });
});
