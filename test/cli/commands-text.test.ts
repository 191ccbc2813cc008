/** `bothost commands` as text shows each command's examples, as its --help says and --json has. */
import { beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, runCli } from "../support/cli.ts";

beforeAll(assertBuilt);

describe("bothost commands (text)", () => {
  it("prints a command's examples under it", async () => {
    const { code, stdout, stderr } = await runCli(["commands", "echo", "--config", "bots/demo/bothost.yaml"]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toMatch(/\n {2}shout <text\.\.\.>[^\n]*\n(?: {6}[^\n]*\n)* {6}e\.g\. shout hello\n/);
    const help = await runCli(["commands", "--help"]);
    expect(help.stdout).toContain("examples");
  });
});
