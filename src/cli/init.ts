import { readdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { ExitCode } from "../config/exit-codes.ts";
import { makeDirs } from "../state/make-dirs.ts";
import { commandArgs } from "./args.ts";
import { initFiles } from "./init-files.ts";
import { bothostSource } from "./init-source.ts";

export const initHelp = `Usage: bothost init [DIR] [--force]

Creates a bothost project in DIR (default: the current folder): package.json, tsconfig.json,
bothost.yaml (the embedded sandbox, with org.yaml), bots/hello.ts, test/hello.test.ts,
.gitignore and README.md. Then: npm install, npm run dev (the bots and a chat page to talk to
them), npm start, npm test. When this bothost runs from a checkout, or was installed from a
local tarball or folder (npx ./bothost-0.1.0.tgz init), the project depends on that same file
("file:…" in package.json); otherwise on the registry's ^version.

Options:
      --force   Write into a folder that is not empty (existing files are replaced)
  -h, --help    Show this text
`;

export async function runInitCommand(argv: string[]): Promise<number> {
  const args = commandArgs("init", argv, initHelp, { force: { type: "boolean" } }, true);
  if (typeof args === "number") return args;
  const { values, positionals } = args;
  if (positionals.length > 1) {
    process.stderr.write(
      `bothost init: give one folder, not ${positionals.length}. Run "bothost init --help".\n`,
    );
    return ExitCode.ConfigInvalid;
  }
  const dir = path.resolve(positionals[0] ?? ".");
  const notFolder = await notAFolder(dir);
  if (notFolder !== undefined) {
    process.stderr.write(`bothost init: ${notFolder}: choose a folder (a new one, or an empty one).\n`);
    return ExitCode.ConfigInvalid;
  }
  const present = await readdir(dir).catch(() => [] as string[]);
  if (present.length > 0 && !values.force) {
    process.stderr.write(
      `bothost init: ${dir} is not empty (${present.slice(0, 3).join(", ")}${present.length > 3 ? ", …" : ""}). ` +
        "Choose an empty folder, or add --force to write into it.\n",
    );
    return ExitCode.ConfigInvalid;
  }
  const name =
    path
      .basename(dir)
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, "-") || "bots";
  const source = bothostSource(dir);
  try {
    for (const [file, text] of Object.entries(initFiles(name, source.spec))) {
      await makeDirs(path.dirname(path.join(dir, file)));
      await writeFile(path.join(dir, file), text);
    }
  } catch (err) {
    const { code, message } = err as NodeJS.ErrnoException;
    process.stderr.write(`bothost init: cannot write the project in ${dir}: ${code ?? message}.\n`);
    return ExitCode.RuntimeFailure;
  }
  const where = positionals[0] ? `cd ${positionals[0]} && ` : "";
  process.stdout.write(
    `Created a bothost project in ${dir}.\n` +
      (source.local ? `It depends on bothost from ${source.local} (package.json: "${source.spec}").\n` : "") +
      `Next: ${where}npm install && npm run dev   (a chat page to talk to the bots; npm start runs them, npm test tests them)\n`,
  );
  return ExitCode.Ok;
}

/**
 * Why `dir` cannot hold a project, when it or a folder above it is a file (a mistyped path);
 * undefined when it is a folder or can be made one.
 */
async function notAFolder(dir: string): Promise<string | undefined> {
  for (let at = dir; ; at = path.dirname(at)) {
    const found = await stat(at).catch(() => undefined);
    if (found?.isDirectory()) return undefined;
    if (found !== undefined) return at === dir ? `${dir} is a file` : `${at} is a file, not a folder`;
    if (path.dirname(at) === at) return undefined;
  }
}
