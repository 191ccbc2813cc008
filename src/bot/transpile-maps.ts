/**
 * Source maps of the user's TypeScript modules, so that an error thrown in one is named at its
 * place in the module's source (errors/source-maps.ts), not in the JavaScript made of it.
 */
import path from "node:path";
import type { TransformOptions, TransformResult } from "jiti";
import { keepSourceMap } from "../errors/source-maps.ts";

/** What jiti runs the made code in, before its first line (with `async ` for an import). */
const JITI_WRAPPER =
  "(function (exports, require, module, __filename, __dirname, jitiImport, jitiESMResolve) { ".length;

/**
 * `make(options)`, for a module of the user's (not in node_modules) asked with an inline source
 * map, which is kept apart and taken off the code; unless jiti asks for maps itself (its
 * JITI_SOURCE_MAPS), when the code keeps its own.
 */
export function withSourceMap(
  options: TransformOptions,
  make: (options: TransformOptions) => TransformResult,
): TransformResult {
  const { filename = "", babel: asked } = options;
  if (
    filename === "" ||
    asked?.sourceMaps !== undefined ||
    filename.split(/[\\/]/).includes("node_modules")
  ) {
    return make(options);
  }
  const made = make({
    ...options,
    babel: { ...asked, sourceMaps: "inline", sourceFileName: path.basename(filename) },
  });
  if (made.error !== undefined) return made;
  const shift = options.async ? JITI_WRAPPER + "async ".length : JITI_WRAPPER;
  return { ...made, code: keepSourceMap(filename, made.code, shift) };
}
