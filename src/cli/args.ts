/**
 * Argument parsing shared by the commands: node:util's parseArgs, strict (an unknown option, a
 * missing value or a stray argument throws, and `main` prints it as a usage error, exit 2), with
 * `-h, --help` added to every command.
 */
import { type ParseArgsConfig, parseArgs } from "node:util";

/** `-c, --config FILE`: every command that reads the config takes it. */
export const configOption = { config: { type: "string", short: "c" } } as const;

type Options = NonNullable<ParseArgsConfig["options"]>;
type Parsed<O extends Options> = ReturnType<
  typeof parseArgs<{
    options: O & { help: { type: "boolean"; short: "h" } };
    allowPositionals: boolean;
    strict: true;
  }>
>;

/** The parsed arguments, or undefined when `--help` was given (the help text is printed then). */
export function commandArgs<const O extends Options>(
  argv: string[],
  help: string,
  options: O,
  allowPositionals = false,
): Parsed<O> | undefined {
  const parsed = parseArgs({
    args: argv,
    options: { ...options, help: { type: "boolean", short: "h" } },
    allowPositionals,
    strict: true,
  }) as Parsed<O>;
  if (!(parsed.values as { help?: boolean }).help) return parsed;
  process.stdout.write(help);
  return undefined;
}
