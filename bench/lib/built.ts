/**
 * The runtime as users run it: the compiled package in dist/ (`npm run bench` builds first),
 * typed from src/. Importing src/ through jiti measured jiti's module wrapper too: every read of
 * an imported binding went through a getter (about 20 ns each, several per event).
 */
import { pathToFileURL } from "node:url";

/** Another build's dist/ (an absolute path) for `npm run bench:ab`; this checkout's by default. */
const root = process.env.BOTHOST_BENCH_DIST
  ? pathToFileURL(`${process.env.BOTHOST_BENCH_DIST.replace(/\/$/, "")}/`)
  : new URL("../../dist/", import.meta.url);

const load = async <T>(path: string): Promise<T> => (await import(new URL(path, root).href)) as T;

export const { createClient } =
  await load<typeof import("../../src/api/create-client.ts")>("api/create-client.js");
export const { BotRuntime } =
  await load<typeof import("../../src/daemon/bot-runtime.ts")>("daemon/bot-runtime.js");
export const { coalesce } = await load<typeof import("../../src/daemon/coalesce.ts")>("daemon/coalesce.js");
export const { createLogger } =
  await load<typeof import("../../src/log/create-logger.ts")>("log/create-logger.js");
export const { RedisStore } =
  await load<typeof import("../../src/state/redis-store.ts")>("state/redis-store.js");
export const { FileStore } =
  await load<typeof import("../../src/state/file-store.ts")>("state/file-store.js");
export const { JobTimer } = await load<typeof import("../../src/scheduler/timing/job-timer.ts")>(
  "scheduler/timing/job-timer.js",
);
export const { realClock } = await load<typeof import("../../src/time/clock.ts")>("time/clock.js");
