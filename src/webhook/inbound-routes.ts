/**
 * Inbound webhooks: `bot.webhook(name, options, handler)` is served at `POST /webhooks/<bot>/<name>`.
 * Order of checks: route (404) → method (405: a webhook takes POST) → bot ready (503) → body
 * size (413) → signature or token (401) → body parse (400) → a JSON body no object, when the
 * webhook takes only objects (422) → idempotency key (400 when the
 * webhook's `idempotencyKey` throws or returns no string) → bot not stopping (503) → idempotency
 * (200 {"duplicate":true} once handled; 503 while a run with the key is under way, or when the
 * state store cannot claim it) → bot not stopping, again (503) → fewer than
 * 64 of the bot's handlers running (503) → handler (200; 503 with `Retry-After` when a call of its
 * would wait for the account's budget past what its sender's deadline (config
 * `webhooks.<name>.sender_timeout`) or its timeout leaves, see budget-room.ts; 500 if it throws).
 *
 * A request with a key (an idempotency header's, one its webhook's `idempotencyKey` reads from the
 * verified request, or a signature's replay key) is claimed for its run, marked handled once it
 * succeeded, released when it failed; a process that died mid-run leaves a claim that expires, so
 * the sender's retry runs the handler again, its sends recorded under the key returning what the
 * first run made. A declared key, its mark and its records are kept for the webhook's idempotency
 * window (config `webhooks.<name>.idempotency_window`).
 */
import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Logger } from "pino";
import { raceAbort, timeoutSignal } from "../api/sleep.ts";
import { failpoint } from "../effects/failpoints.ts";
import { countAsWebhook } from "../log/access-log.ts";
import type { WebhookContext } from "../pipeline/context.ts";
import { isStoreOutage, StateError } from "../state/state-error.ts";
import type { StateStore } from "../state/state-store.ts";
import type { Clock } from "../time/clock.ts";
import {
  BudgetRefusal,
  callMarginMs,
  crowded,
  refuseLongBudgetWaits,
  requestDeadline,
} from "./budget-room.ts";
import { HttpStatusError, parseBody, readBody } from "./parse-body.ts";
import { RefusalLog } from "./refusal-log.ts";
import type { WebhookRequestCounts } from "./request-counts.ts";
import { noHeaderOnce, readKey } from "./request-key.ts";
import { toleranceOf, verifyRequest } from "./verify-request.ts";
import type { WebhookKeySource, WebhookOptions, WebhookRuntime } from "./webhook-runtime.ts";

export interface InboundBot {
  runtime: WebhookRuntime;
  handlerTimeoutMs: number;
  /** How long the webhook `name` keeps a handled request's key, and its runs' records (config `webhooks`). */
  idempotencyWindowMs(name: string): number;
  /** How long the sender of the webhook `name` waits for its answer (config `webhooks`). */
  senderTimeoutMs(name: string): number;
  /** Where idempotency keys go: the bot's own namespace (`<bot>/webhooks`). */
  store: StateStore;
  /** Makes the bot's writes outlive a kill of the process (the state store's commit). */
  commit(): Promise<void>;
}

export interface InboundDeps {
  bots: ReadonlyMap<string, InboundBot>;
  log: Logger;
  /** Body limit for webhooks that declare none. */
  bodyLimit: number;
  /** Aborted when the daemon's stop passed its deadline with handlers still running (`ROUTER_ABORTED`). */
  stopping: AbortSignal;
  /** What signatures' timestamps are checked against and handlers are timed on. */
  clock: Clock;
  /** Where each request to a declared webhook is counted, by its answer's status. */
  counts?: WebhookRequestCounts;
}

interface Target {
  /** When the request arrived (epoch ms): its sender's deadline counts from then. */
  arrivedAt: number;
  bot: InboundBot;
  name: string;
  options: WebhookOptions;
  handler: (ctx: WebhookContext<unknown>) => unknown;
}

const UNKNOWN_ROUTE = "/webhooks/(unknown)";

export function registerInboundRoutes(app: FastifyInstance, deps: InboundDeps): void {
  const targets = new WeakMap<FastifyRequest, Target>();
  /** Requests to a declared webhook, counted once answered (whatever answered them: a hook, the parser, the route). */
  const counted = new WeakMap<FastifyRequest, { bot: string; name: string }>();
  /** Each bot's inbound handlers running now (by bot name: a reload's new runtime counts on). */
  const running = new Map<string, number>();
  const refusals = new RefusalLog(deps.log, deps.clock);
  app.addHook("onClose", async () => refusals.close());
  app.register(async (scope) => {
    // Signatures cover the exact bytes: read every body raw, then parse it ourselves.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", async (request: FastifyRequest, payload: NodeJS.ReadableStream) => {
      const limit = targets.get(request)?.options.maxBodyBytes ?? deps.bodyLimit;
      return readBody(payload as never, limit, request.headers["content-length"]);
    });
    scope.addHook("onRequest", async (request, reply) => {
      const { bot: botName, name } = request.params as { bot: string; name: string };
      const bot = deps.bots.get(botName);
      const refuse = (status: number, error: string) => {
        countAsWebhook(request, UNKNOWN_ROUTE);
        return fail(reply, status, error);
      };
      const arrivedAt = deps.clock.now();
      let declared: Omit<Target, "bot" | "name" | "arrivedAt"> | undefined;
      // Another instance runs the bot (cluster mode): it may never have been set up here.
      if (bot?.runtime.status.state === "standby") {
        return refuse(503, `bot ${botName} runs on another instance now; try again`);
      }
      try {
        declared = bot?.runtime.declarations.webhooks.get(name) as typeof declared;
      } catch {
        return refuse(503, `bot ${botName} is starting; try again`);
      }
      if (!bot || !declared) return refuse(404, `no webhook at /webhooks/${botName}/${name}`);
      countAsWebhook(request, `/webhooks/${botName}/${name}`);
      counted.set(request, { bot: botName, name });
      if (request.method !== "POST") {
        reply.header("allow", "POST");
        return fail(reply, 405, `a webhook takes POST requests, not ${request.method}`);
      }
      if (bot.runtime.status.server === undefined) {
        return fail(reply, 503, `bot ${botName} has not reached its server yet; try again`);
      }
      targets.set(request, { bot, name, arrivedAt, ...declared });
    });
    scope.addHook("onResponse", async (request, reply) => {
      const to = counted.get(request);
      if (to) deps.counts?.count(to.bot, to.name, reply.statusCode, deps.clock.now());
    });
    scope.post("/webhooks/:bot/:name", async (request, reply) => {
      const target = targets.get(request)!;
      return handle(target, request, reply, deps, running, refusals);
    });
    // Other methods reach the hook above too: 404 for an unknown webhook, else 405.
    scope.route({
      method: ["GET", "PUT", "PATCH", "DELETE"],
      url: "/webhooks/:bot/:name",
      handler: async (request, reply) =>
        fail(reply, 405, `a webhook takes POST requests, not ${request.method}`),
    });
  });
}

function fail(reply: FastifyReply, status: number, error: string) {
  return reply.code(status).send({ error });
}

async function handle(
  target: Target,
  request: FastifyRequest,
  reply: FastifyReply,
  deps: InboundDeps,
  running: Map<string, number>,
  refusals: RefusalLog,
) {
  const { clock } = deps;
  const { bot, name, options } = target;
  const log = deps.log.child({ bot: bot.runtime.name, webhook: name, requestId: request.id });
  const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const verdict = verifyRequest(options.verify, request.headers, rawBody, clock.now() / 1000);
  if (!verdict.ok) {
    log.warn({ reason: verdict.reason }, "webhook request refused");
    return fail(reply, 401, `unauthorized: ${verdict.reason}`);
  }
  const source: WebhookKeySource = {
    body: parseBody(rawBody, request.headers["content-type"]),
    rawBody,
    headers: request.headers,
    query: request.query as Record<string, string>,
  };
  const notObject = options.objectBody ? notAnObject(source.body) : undefined;
  if (notObject !== undefined) {
    log.warn({ got: notObject }, "webhook request refused: its JSON body is no object");
    return fail(reply, 422, `the body must be a JSON object, not ${notObject}`);
  }
  const read = readKey(options, source);
  if (typeof read === "object") {
    // A refusal bothost words itself (the relay bot's idempotencyKey setting naming the wrong
    // field) is the operator's to fix: its message alone, one line; a bug keeps its stack.
    const said = worded(read.err) ? { reason: read.err.message, code: read.err.code } : undefined;
    log.warn(
      said ?? { err: read.err, reason: read.reason },
      "webhook request refused: its idempotency key could not be read",
    );
    return fail(
      reply,
      400,
      `the idempotency key could not be read: webhook ${name}'s idempotencyKey ${read.reason}`,
    );
  }
  const idempotencyKey = read;
  noHeaderOnce(options, source, log);
  const claimKey = idempotencyKey ?? verdict.replayKey;
  const storeKey =
    claimKey === undefined ? undefined : `${name}:${createHash("sha256").update(claimKey).digest("hex")}`;
  // A declared key is kept for the webhook's window, and so is all its runs recorded under it.
  const keptMs = idempotencyKey === undefined ? undefined : bot.idempotencyWindowMs(name);
  const claimedAt = clock.now();
  const botName = bot.runtime.name;
  // A bot not running here (stopped for its lease lost, stopping, reloading) claims nothing: its
  // store may be out of reach or fenced, and the sender's retry goes where it runs then.
  if (notRunning(bot)) return fail(reply, 503, `bot ${botName} is not running here now; try again`);
  if (storeKey !== undefined) {
    const claimed = await claim(bot, storeKey, claimedAt).catch((err: unknown) => {
      if (!isStoreOutage(err)) throw err;
      return err;
    });
    if (claimed instanceof StateError) {
      // An outage is no fault of the request's: a 503 its sender retries, no stack.
      log.warn(
        { code: claimed.code, reason: claimed.message },
        "webhook request answered 503: its idempotency key could not be claimed",
      );
      reply.header("retry-after", "10");
      return fail(
        reply,
        503,
        claimed.code === "STATE_FENCED"
          ? `bot ${botName} is not running here now; try again`
          : `bot ${botName} cannot reach its state store; try again later`,
      );
    }
    if (claimed === "done") {
      log.info("repeated webhook request dropped");
      return { duplicate: true };
    }
    if (typeof claimed === "number") {
      log.info("repeated webhook request while the first is being handled: try again later");
      reply.header("retry-after", String(Math.ceil(claimed / 1000)));
      return fail(reply, 503, "a request with this key is being handled; try again later");
    }
  }
  // One that began stopping while the key was claimed runs nothing new either: the key is released.
  if (notRunning(bot)) {
    if (storeKey !== undefined) await bot.store.delete(storeKey).catch(() => {});
    return fail(reply, 503, `bot ${botName} is not running here now; try again`);
  }
  const busy = crowded(botName, running.get(botName) ?? 0);
  if (busy !== undefined) {
    if (storeKey !== undefined) await bot.store.delete(storeKey).catch(() => {});
    refusals.refused(botName, name, "crowded");
    reply.header("retry-after", String(busy.retryAfterS));
    return fail(reply, 503, busy.error);
  }
  running.set(botName, (running.get(botName) ?? 0) + 1);
  // Budget waits count (not so for an event handler): the sender waits, the claim lasts this + 10 s.
  const timeout = timeoutSignal(clock, bot.handlerTimeoutMs);
  const refusal = new AbortController();
  const signal = AbortSignal.any([timeout.signal, deps.stopping, refusal.signal]);
  const senderTimeoutMs = bot.senderTimeoutMs(name);
  const deadline = requestDeadline(target.arrivedAt, senderTimeoutMs, clock.now(), bot.handlerTimeoutMs);
  refuseLongBudgetWaits(bot.runtime, signal, refusal, clock, deadline, callMarginMs(senderTimeoutMs));
  try {
    // Its sends are recorded under the key: a run again (after a crash) makes none twice, and one
    // whose answer was lost is looked for back to when the request was first claimed.
    const effects =
      storeKey === undefined ? undefined : await bot.runtime.sendEffects(`w:${storeKey}`, claimedAt, keptMs);
    const result = await bot.runtime.runHandler(
      signal,
      "inbound-webhook",
      { webhook: name, requestId: request.id },
      // Assigned, not spread: the base context's helpers are getters on its prototype.
      (base): WebhookContext<unknown> =>
        Object.assign(base, {
          request: { ...source, idempotencyKey },
        }),
      (ctx) => raceAbort(Promise.resolve(target.handler(ctx)), signal),
      effects,
      // ctx.state writes apply when the handler succeeds, once per idempotency (or replay) key.
      { once: storeKey === undefined ? undefined : `w:${storeKey}`, keptMs },
    );
    failpoint("webhook-ran");
    if (storeKey !== undefined)
      await bot.store.set(storeKey, DONE, { ttlMs: keptMs ?? replayKeptMs(options) });
    // Kept before the answer: a sender told 200 does not retry, so a kill now must not undo the
    // run's state writes or its handled mark.
    await bot.commit();
    return isPlainObject(result) ? result : { ok: true };
  } catch (err) {
    // Let the sender's retry run the handler again.
    if (storeKey !== undefined) await bot.store.delete(storeKey).catch(() => {});
    if (err instanceof HttpStatusError) throw err;
    if (deps.stopping.aborted) {
      // Cut off by the stop, not failed: the sender's retry runs it again (its sends made once).
      log.warn("webhook handler cut short by the shutdown's deadline: answered 503, to be sent again");
      reply.header("retry-after", "30");
      return fail(reply, 503, "the daemon stopped before the webhook handler finished; try again");
    }
    if (refusal.signal.reason instanceof BudgetRefusal) {
      const { error, retryAfterS } = refusal.signal.reason.answer;
      refusals.refused(botName, name, "budget");
      reply.header("retry-after", String(retryAfterS));
      return fail(reply, 503, error);
    }
    log.error({ err }, signal.aborted ? "webhook handler timed out" : "webhook handler failed");
    return fail(reply, 500, signal.aborted ? "the webhook handler timed out" : "the webhook handler failed");
  } finally {
    timeout.clear();
    const left = (running.get(botName) ?? 1) - 1;
    if (left > 0) running.set(botName, left);
    else running.delete(botName);
  }
}

/**
 * A BothostError, by its name: a bot's module may load its own copy of bothost (the package's
 * build), whose class is not this one.
 */
function worded(err: unknown): err is Error & { code: string } {
  return (
    err instanceof Error &&
    err.name === "BothostError" &&
    typeof (err as { code?: unknown }).code === "string"
  );
}

/** What a parsed body is when it is JSON but no object (`null`, "an array"…); undefined otherwise. */
function notAnObject(body: unknown): string | undefined {
  if (body === undefined) return undefined;
  if (body === null) return "null";
  if (Array.isArray(body)) return "an array";
  return typeof body === "object" ? undefined : `a ${typeof body}`;
}

/** A bot stopping, stopped (its lease lost, a Redis outage) or halted by a reload here: it runs nothing new. */
function notRunning(bot: InboundBot): boolean {
  const state = bot.runtime.status.state;
  return state === "stopping" || state === "stopped" || state === "reloading";
}

/** A handled request's claim (a run under way keeps `{ running: <since> }`; older versions kept a time). */
const DONE = "done";

/**
 * How long a handled request's replay key (a signature's) is kept: twice the signature's tolerance,
 * as long as the same signed request is accepted at all.
 */
function replayKeptMs(options: WebhookOptions): number {
  return 2_000 * toleranceOf(options.verify);
}

/**
 * Claim `key` for a run: "claimed", "done" (handled already), or the ms until the claim of a run
 * under way expires (its process may have died: then the key is free again once it expired).
 * A run's claim lasts its handler timeout and 10 s: a run is answered (500) at its timeout.
 */
async function claim(bot: InboundBot, key: string, now: number): Promise<"claimed" | "done" | number> {
  const holdMs = bot.handlerTimeoutMs + 10_000;
  if (await bot.store.setIfAbsent(key, { running: now }, { ttlMs: holdMs })) return "claimed";
  const held = (await bot.store.get(key)) as { running?: number } | string | number | undefined;
  if (held === undefined) return claim(bot, key, now);
  if (typeof held !== "object" || typeof held.running !== "number") return "done";
  return Math.max(1_000, held.running + holdMs - now);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype;
}
