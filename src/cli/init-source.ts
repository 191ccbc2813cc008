/**
 * Where a project made by `bothost init` gets bothost from. bothost is installed from a clone or
 * a tarball (`npm pack`), not from the npm registry, so a `^version` range would not install:
 * when this bothost came from a local tarball or folder (`npx ./bothost-0.1.0.tgz init`, or
 * `npm install ../bothost-0.1.0.tgz` in the folder above), or runs from a checkout, the new
 * project depends on that same file (`file:` + a path relative to the project).
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { bothostVersion } from "../api/version.ts";

/** What the new package.json says for bothost, and the local file it names, if any. */
export interface BothostSource {
  /** `file:../bothost-0.1.0.tgz`, `file:../bothost`, or `^0.1.0`. */
  spec: string;
  /** The tarball or folder, absolute; undefined for a registry range. */
  local?: string;
}

/** The folder holding bothost's package.json (two levels up from src/cli and dist/cli). */
const ownRoot = () => fileURLToPath(new URL("../../", import.meta.url));

/**
 * The dependency for a project in `projectDir`. `packageRoot` is the running bothost's folder
 * (a parameter for the tests).
 */
export function bothostSource(projectDir: string, packageRoot: string = ownRoot()): BothostSource {
  const local = localOrigin(realpathSync(packageRoot));
  if (local === undefined) return { spec: `^${bothostVersion}` };
  const relative = path.relative(projectDir, local).split(path.sep).join("/");
  return { spec: `file:${relative.startsWith(".") ? relative : `./${relative}`}`, local };
}

/** The tarball or folder this installed copy came from, or this checkout itself. */
function localOrigin(root: string): string | undefined {
  const parent = path.dirname(root);
  if (path.basename(parent) !== "node_modules") {
    // Not installed by npm: a checkout (it has the sources) runs as itself.
    return existsSync(path.join(root, "src", "cli", "main.ts")) ? root : undefined;
  }
  // Installed: the package.json beside node_modules (npx keeps one too) says from where.
  const holder = path.dirname(parent);
  try {
    const manifest = JSON.parse(readFileSync(path.join(holder, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
    };
    const spec = manifest.dependencies?.bothost ?? manifest.devDependencies?.bothost;
    if (spec?.startsWith("file:")) {
      const target = path.resolve(holder, spec.slice("file:".length));
      if (existsSync(target)) return target;
    }
  } catch {}
  return undefined;
}
