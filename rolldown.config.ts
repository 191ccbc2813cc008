/**
 * The second step of `npm run build`, after tsc has written dist/: the package's entry points
 * (the CLI's program, `bothost`, `bothost/testing`, `bothost/testing/vitest`) are bundled with
 * rolldown into dist/bundle/, sharing their common modules in chunks, so a start loads some 60
 * chunks instead of some 290 modules of dist/ and 70 of yaml's: a daemon's start takes about a third
 * less CPU on Node.js 20, whose ESM loader costs per module (bench/README.md has the figures).
 * One graph for all entry points keeps one copy of each class in a process: a bot's
 * `import { PromptError } from "bothost"` is the class the daemon throws.
 * Dependencies stay external (installed beside bothost; the bot's own `zod` is the daemon's),
 * except yaml, read only through bothost's config loading. dist/bundle/ is two folders below the
 * package's root, as every module of dist/ is, so each `new URL("../../…", import.meta.url)` of
 * src/ (package.json, bots/demo) finds the same file. tsc's dist/ stays: its .d.ts are the
 * package's types, and `bothost/register` is its own file.
 */
import { defineConfig } from "rolldown";

const inlined = /^yaml(\/|$)/;

export default defineConfig({
  input: {
    bothost: "dist/cli/bothost.js",
    index: "dist/index.js",
    testing: "dist/testing.js",
    "testing-vitest": "dist/testing/vitest.js",
  },
  platform: "node",
  external: (id) => id.startsWith("node:") || (/^[@a-z]/.test(id) && !inlined.test(id)),
  output: {
    dir: "dist/bundle",
    cleanDir: true,
    // Class and function names as written: the `instanceof` of BothostError compares them.
    keepNames: true,
    format: "esm",
    entryFileNames: "[name].js",
    chunkFileNames: "[name]-[hash].js",
  },
});
