/**
 * Where a bot module's specifier points: a file relative to the config, or an installed package.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Jiti } from "jiti";
import { displayPath } from "../config/config-source.ts";
import { ModuleError } from "./module-error.ts";

/** File extensions a bot module may have. */
export const MODULE_EXTENSIONS = [".ts", ".mts", ".cts", ".js", ".mjs", ".cjs"];

const PATH_LIKE = /^(?:\.{1,2}(?:[\\/]|$)|[\\/]|[A-Za-z]:[\\/]|file:)/;

/**
 * The absolute file a specifier names. Paths (`./x.ts`, `../x.mjs`, `/abs/x.js`, `file:` URLs) are
 * resolved against `configDir`; other names are packages, resolved with Node's ESM rules from
 * `configDir` (so a package installed next to the config is found). A bare `bots/x.ts` that
 * exists as a file is taken as that file, since that is what its author meant.
 */
export async function resolveModule(
  specifier: string,
  details: { configDir: string; botName?: string | undefined },
  /** The loader, made only when a package name needs resolving. */
  jiti: () => Promise<Jiti>,
): Promise<string> {
  const { configDir, botName } = details;
  const fail = (code: "MODULE_NOT_FOUND" | "MODULE_INVALID", message: string, resolvedPath?: string) =>
    new ModuleError(code, { botName, specifier, resolvedPath }, message);
  const isPath = PATH_LIKE.test(specifier) || path.isAbsolute(specifier);
  const asFile = specifier.startsWith("file:")
    ? fileURLToPath(specifier)
    : path.resolve(configDir, specifier);
  const kind = await fileKind(asFile);
  if (isPath || kind === "file") {
    if (kind === "missing") {
      throw fail(
        "MODULE_NOT_FOUND",
        `was not found (no file ${displayPath(asFile, process.cwd())}): check the path; it starts at the config file's folder`,
      );
    }
    if (kind === "folder") {
      throw fail(
        "MODULE_NOT_FOUND",
        `is a folder: name the module file inside it, e.g. ${specifier.replace(/[\\/]$/, "")}/index.ts`,
      );
    }
    if (!MODULE_EXTENSIONS.includes(path.extname(asFile))) {
      throw fail(
        "MODULE_INVALID",
        `is not a JavaScript or TypeScript file: bot modules end in ${MODULE_EXTENSIONS.join(", ")}`,
        asFile,
      );
    }
    return asFile;
  }
  const parentURL = pathToFileURL(path.join(configDir, "/")).href;
  const resolved = (await jiti()).esmResolve(specifier, { parentURL, try: true });
  if (resolved === undefined) {
    throw fail(
      "MODULE_NOT_FOUND",
      `is neither a file next to the config nor an installed package: for a file write ./${specifier}; for a package run npm install ${specifier} in ${configDir}`,
    );
  }
  if (!resolved.startsWith("file:")) {
    throw fail(
      "MODULE_INVALID",
      `resolves to ${resolved}, which is not a bot module: name a file or a bot package`,
    );
  }
  return fileURLToPath(resolved);
}

async function fileKind(file: string): Promise<"file" | "folder" | "missing"> {
  try {
    return (await stat(file)).isDirectory() ? "folder" : "file";
  } catch {
    return "missing";
  }
}
