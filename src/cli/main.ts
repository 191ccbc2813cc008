#!/usr/bin/env node
/**
 * The `bothost` executable. The compile cache is turned on before anything else is loaded: the
 * command line (bothost.ts) and every module a command loads are imported only after it.
 */
import { enableCompileCache } from "./compile-cache.ts";

enableCompileCache();
await import("./bothost.ts");
