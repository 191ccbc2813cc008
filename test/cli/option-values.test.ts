/**
 * A value beginning with a dash given to an option that takes one (`--limit -3`): the command's own
 * check names the option and what it allows; parseArgs' wording never reaches the user.
 */
import { PassThrough } from "node:stream";
import { expect, it } from "vitest";
import { commandArgs } from "../../src/cli/args.ts";
import { runSandboxCommand } from "../../src/cli/sandbox.ts";

function capture() {
  const stream = new PassThrough();
  let text = "";
  stream.on("data", (c: Buffer) => {
    text += c.toString();
  });
  return { stream, text: () => text };
}

const backtestOptions = {
  config: { type: "string", short: "c" },
  limit: { type: "string" },
  json: { type: "boolean" },
} as const;

it("hands a negative number to the command, which names the option and what it allows", async () => {
  const parsed = commandArgs(
    "backtest",
    ["bot", "--limit", "-3", "-c", "-1.yaml"],
    "",
    backtestOptions,
    true,
  );
  expect(typeof parsed).not.toBe("number");
  expect((parsed as Exclude<typeof parsed, number>).values).toMatchObject({ limit: "-3", config: "-1.yaml" });

  for (const [argv, text] of [
    [["--port", "-1"], '--port must be a whole number from 0 to 65535, got "-1"'],
    [["--port", ""], '--port must be a whole number from 0 to 65535, got ""'],
    [["--heartbeat", "-5"], '--heartbeat must be a positive number of seconds, got "-5"'],
  ] as [string[], string][]) {
    const err = capture();
    expect(await runSandboxCommand(argv, { stderr: err.stream })).toBe(2);
    expect(err.text()).toBe(`bothost sandbox: ${text}.\n`);
  }
});

it("says an option whose value is another option needs a value, naming it", () => {
  for (const argv of [
    ["bot", "--limit", "--json"],
    ["bot", "-c", "--json"],
  ]) {
    const err = capture();
    expect(commandArgs("backtest", argv, "", backtestOptions, true, { stderr: err.stream })).toBe(2);
    const option = argv[1] === "-c" ? "--config" : "--limit";
    expect(err.text()).toBe(
      `bothost backtest: ${option} needs a value; a value beginning with "-" is given as ${option}=VALUE. Run "bothost backtest --help" for the options.\n`,
    );
  }
});
