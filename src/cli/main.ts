#!/usr/bin/env node
/**
 * The `bothost` executable. The Node.js running it is checked first (node-check.ts), then the
 * compile cache is turned on before anything else is loaded: the
 * command line and every module a command loads are imported only after it. Built (dist/cli/),
 * the command line is the bundle's (rolldown.config.ts), the graph `bothost` and `bothost/testing`
 * load too, so a bot module's imports are the daemon's own classes; run from src/, its modules.
 */
import { enableCompileCache } from "./compile-cache.ts";
import { unsupportedNode } from "./node-check.ts";

const refused = unsupportedNode(process.versions.node, process.execPath);
if (refused !== undefined) {
  process.stderr.write(`bothost: ${refused}\n`);
  process.exit(2); // as a setup that is wrong: restarting does not mend it
}
enableCompileCache();
const bundled = new URL("../bundle/bothost.js", import.meta.url);
await import(import.meta.url.endsWith(".js") ? bundled.href : "./bothost.ts");
