/**
 * A bothost BotRuntime built the way the Daemon builds one (client on the shared pool, FileStore
 * in a temp directory with coalesced flushes, pino at info), with a bot definition of the
 * benchmark's choosing. Only the client's rate limiter can be turned off: the server allows 200
 * calls a minute per account, so replies at 2,000/s are a runtime measurement, not a real setup.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { BotApi } from "../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import type { BotRuntime as Runtime } from "../../src/daemon/bot-runtime.ts";
import { BotRuntime, coalesce, createClient, createLogger, FileStore, realClock } from "./built.ts";

export interface BenchRuntime {
  /** Not started: call `runtime.start()` (registers the queue, then polls in the background). */
  runtime: Runtime;
  /** Log lines at warn or above (none expected). */
  problems: string[];
  close(): Promise<void>;
}

/** A discarding log stream that keeps warnings and errors, so a run that went wrong says so. */
export function quietLog(problems: string[], level = "info") {
  const destination = new Writable({
    write(chunk, _enc, done) {
      const text = String(chunk);
      if (/"level":(40|50|60)/.test(text)) problems.push(text.slice(0, 300));
      done();
    },
  });
  return createLogger({ destination, pretty: false, level });
}

export async function startBenchRuntime(options: {
  url: string;
  email: string;
  apiKey: string;
  setup: (bot: BotApi) => void;
  rateLimit?: boolean;
  concurrency?: number;
}): Promise<BenchRuntime> {
  const dir = await mkdtemp(join(tmpdir(), "bothost-bench-"));
  const store = await FileStore.open(dir);
  const problems: string[] = [];
  const log = quietLog(problems).child({ bot: "bench" });
  const client = createClient({
    url: options.url,
    email: options.email,
    apiKey: options.apiKey,
    logger: log,
    ...(options.rateLimit === false ? { rateLimit: false as const } : {}),
  });
  const definition = { setup: options.setup } as unknown as BotDefinition<never, never>;
  const runtime = new BotRuntime({
    name: "bench",
    definition,
    settings: undefined,
    client,
    store,
    flush: coalesce(() => store.flush()),
    commit: () => store.commit(),
    // As the Daemon wires it (a build from before syncCommit lacks the two methods: bench:ab).
    ...("commitNow" in store
      ? { syncCommit: { ready: () => store.canCommitNow(), commit: () => store.commitNow() } }
      : {}),
    log,
    ownMessages: false,
    concurrency: options.concurrency ?? 8,
    handlerTimeoutMs: 30_000,
    replay: { maxMessages: 1000, maxAgeMs: 86_400_000 },
    longMessages: "split",
    longpollMarginMs: 10_000,
    backoff: { initialMs: 500, maxMs: 30_000 },
    clock: realClock,
    retries: { attempts: 1, backoffMs: 1, maxBackoffMs: 1 },
  });
  return {
    runtime,
    problems,
    close: async () => {
      await runtime.stop(5_000);
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
