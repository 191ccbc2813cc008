/**
 * The soak's fault schedule, injected under load: failures of polls, registrations and catch-up
 * fetches, and of replies (POST /messages) before and after the server stored them, which the
 * bots' handler retries and send verification must turn into exactly one reply each. Resets
 * and kill -9 are injected in a quiet window (a handler running at the kill would run again).
 */
import type { Sandbox } from "../../src/sandbox/types.ts";

export type FaultName =
  | "expire-queue"
  | "5xx-burst"
  | "502-html"
  | "429"
  | "hang-poll"
  | "register-5xx+expire"
  | "server-restart"
  | "reset-connections"
  | "send-503-after"
  | "send-502-html-after"
  | "send-500-before"
  | "kill-9";

export interface Fault {
  name: FaultName;
  /** Inject only once the load is paused and every message so far has been answered. */
  quiet: boolean;
  inject(sandbox: Sandbox, botEmails: string[], round: number): void;
}

/** The rotation; kill -9 is scheduled separately (early, so most of the run is one process). */
export const rotation: Fault[] = [
  {
    name: "expire-queue",
    quiet: false,
    inject: (s, bots, round) => s.control.expireQueue({ email: expiryTarget(s, bots, round) }),
  },
  {
    name: "5xx-burst",
    quiet: false,
    inject: (s) => s.control.failNext(6, { status: 503, paths: ["/events"] }),
  },
  {
    name: "502-html",
    quiet: false,
    inject: (s) => s.control.failNext(2, { status: 502, nonJson: true, paths: ["/events"] }),
  },
  { name: "429", quiet: false, inject: (s) => s.control.rateLimitNext(3, 1) },
  { name: "hang-poll", quiet: false, inject: (s) => s.control.hangNextPoll() },
  {
    name: "register-5xx+expire",
    quiet: false,
    inject: (s, bots, round) => {
      s.control.failNext(3, { status: 500, paths: ["/register"] });
      s.control.expireQueue({ email: expiryTarget(s, bots, round + 1) });
    },
  },
  { name: "server-restart", quiet: false, inject: (s) => s.control.restartQueues() },
  { name: "reset-connections", quiet: true, inject: (s) => s.control.resetConnections(2) },
  {
    name: "send-503-after",
    quiet: false,
    inject: (s) => s.control.failNext(2, { status: 503, after: true, paths: [/^\/messages$/] }),
  },
  {
    name: "send-502-html-after",
    quiet: false,
    inject: (s) =>
      s.control.failNext(2, { status: 502, nonJson: true, after: true, paths: [/^\/messages$/] }),
  },
  {
    name: "send-500-before",
    quiet: false,
    inject: (s) => s.control.failNext(2, { status: 500, paths: [/^\/messages$/] }),
  },
];

/**
 * The bot whose queue an expiry hits: the round's, or the next one whose poll is parked. A bot
 * registering again (after the hung poll's watchdog, on a loaded machine) would take the expiry
 * into that registration, and the report would count no `queue_expired` for it.
 */
function expiryTarget(s: Sandbox, bots: string[], round: number): string {
  const parked = new Set(
    s.control
      .queues()
      .filter((q) => q.parked)
      .map((q) => q.email),
  );
  for (let i = 0; i < bots.length; i++) {
    const bot = bots[(round + i) % bots.length] as string;
    if (parked.has(bot)) return bot;
  }
  return bots[round % bots.length] as string;
}
