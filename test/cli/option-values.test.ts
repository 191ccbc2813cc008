/**
 * A value beginning with a dash given to an option that takes one (`--limit -3`): the command's own
 * check names the option and what it allows; parseArgs' wording never reaches the user.
 */
import { PassThrough } from "node:stream";
import { expect, it, vi } from "vitest";
import { commandArgs } from "../../src/cli/args.ts";
import { runBacktestCommand } from "../../src/cli/backtest.ts";
import { runSandboxCommand } from "../../src/cli/sandbox.ts";
import { runScheduleCommand } from "../../src/cli/schedule.ts";

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

it("takes number options in plain decimal only: 1e3, 0x10 and padded values are refused", async () => {
  for (const [argv, text] of [
    [["--port", "1e3"], '--port must be a whole number from 0 to 65535, got "1e3"'],
    [["--port", "0x10"], '--port must be a whole number from 0 to 65535, got "0x10"'],
    [["--port", "0", "--heartbeat", "1e3"], '--heartbeat must be a positive number of seconds, got "1e3"'],
    [["--port", "0", "--heartbeat", "0x10"], '--heartbeat must be a positive number of seconds, got "0x10"'],
    [["--port", "0", "--heartbeat", " 5"], '--heartbeat must be a positive number of seconds, got " 5"'],
  ] as [string[], string][]) {
    const err = capture();
    // Stopped at once should a value be taken and the sandbox start.
    expect(await runSandboxCommand(argv, { stderr: err.stream, signal: AbortSignal.abort() })).toBe(2);
    expect(err.text()).toBe(`bothost sandbox: ${text}.\n`);
  }
  // Backtest and schedule write their usage errors to the process's stderr.
  const written: string[] = [];
  const spy = vi
    .spyOn(process.stderr, "write")
    .mockImplementation((chunk) => written.push(String(chunk)) > 0);
  try {
    const backtest = (option: string, value: string, want: string) =>
      [runBacktestCommand, ["bot", option, value], `backtest: ${option} ${value}: give ${want}`] as const;
    const schedule = (value: string) =>
      [
        runScheduleCommand,
        ["preview", "-n", value],
        `schedule: --count must be a whole number from 1 to 100, got "${value}"`,
      ] as const;
    for (const [run, argv, text] of [
      backtest("--limit", "1e3", "a positive whole number"),
      backtest("--limit", "0x10", "a positive whole number"),
      backtest("--from", "1e3", "a message id (a positive whole number)"),
      schedule("1e1"),
      schedule("0x10"),
    ]) {
      written.length = 0;
      expect(await run([...argv])).toBe(2);
      const command = text.split(":")[0];
      expect(written.join("")).toBe(`bothost ${text}. Run "bothost ${command} --help" for the options.\n`);
    }
  } finally {
    spy.mockRestore();
  }
});
