/**
 * A daemon in this process with one bot, on the test clock, against a sandbox over HTTP, its
 * state a FileStore in a temp folder whose writes under one of the bot's namespaces pass a
 * {@link StoreGate}: the setup of the dialog and store fault tests in test/daemon.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox, SandboxOptions } from "../../src/sandbox/types.ts";
import { FileStore } from "../../src/state/file-store.ts";
import { type InProcessDaemon, startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { gatedBackend, type StoreGate } from "./gated-store.ts";

type BotEntry = Parameters<typeof startInProcessDaemon>[1][string];

export interface GatedDaemonOptions {
  /** The bot's name in the config, and the first part of the gated namespace. */
  name: string;
  email: string;
  fullName: string;
  definition: BotEntry["definition"];
  /** The bot entry's extra YAML lines (`handler_timeout: 1h`), read at each start and restart. */
  extra?: string;
  /** Without a gate, every write goes straight to the store. */
  gate?: StoreGate;
  /** The namespace under the bot's whose writes pass the gate (`"dialogs"`, `"kv"`). */
  gated?: string;
  /** Extra top-level YAML (an `http:` block, for the metrics). */
  global?: string;
  /** Channels the bot's account joins (none unless given). */
  channels?: string[];
  /**
   * The sandbox's and the daemon's clock; default a new TestClock (real pace between advances).
   * A held one (`new TestClock({ held: true })`) when a timer shorter than the work around it (a
   * handler timeout of a second) must fire only where the test moves the clock.
   */
  clock?: TestClock;
  /** The sandbox's clock runs this much behind the daemon's (two machines' clocks). */
  serverBehindMs?: number;
  /** Called after each of the sandbox's answers, before it is sent (a test arms a fault at a given step). */
  onResponse?: SandboxOptions["onResponse"];
  /** The sandbox's heartbeat period (real seconds; default the server's 45-55). */
  heartbeatSeconds?: number;
}

export interface GatedDaemon {
  sandbox: Sandbox;
  /** The daemon started last: the first one, or the one {@link restart} started. */
  readonly running: InProcessDaemon;
  clock: TestClock;
  /** The temp folder of the state, removed by the caller's cleanup. */
  dir: string;
  /** A direct message from `member@sandbox.example` to the bot; its message id. */
  dm(content: string): number;
  /**
   * Stops `running` and starts the daemon again on the same store (the same gate), `between` done
   * while it is down: resolves the new daemon. `stop`: the stop's options (`deadlineMs: 0`: cut
   * off, as in a crash).
   */
  restart(between?: () => unknown, stop?: { deadlineMs: number }): Promise<InProcessDaemon>;
  /**
   * Stops the daemon started last (and one a restart under way starts later), then the sandbox,
   * and removes the state, once (see {@link closeGatedDaemon}).
   */
  close(): Promise<void>;
}

export async function startGatedDaemon(o: GatedDaemonOptions): Promise<GatedDaemon> {
  const clock = o.clock ?? new TestClock();
  const behind = o.serverBehindMs ?? 0;
  const sandbox = await startSandbox({
    clock: behind === 0 ? clock : { now: () => clock.now() - behind },
    ...(o.onResponse ? { onResponse: o.onResponse } : {}),
    ...(o.heartbeatSeconds ? { heartbeatSeconds: o.heartbeatSeconds } : {}),
  });
  sandbox.control.createUser({
    email: o.email,
    full_name: o.fullName,
    bot: "generic",
    owner: "owner@sandbox.example",
    ...(o.channels ? { channels: o.channels } : {}),
  });
  const dir = await mkdtemp(join(tmpdir(), `bothost-${o.name}-`));
  const launch = async () => {
    // Read at each launch: a case changes `o.extra` before a restart (a config change).
    const entry: BotEntry = {
      email: o.email,
      definition: o.definition,
      ...(o.extra ? { extra: o.extra } : {}),
    };
    const files = await FileStore.open(dir, { now: () => clock.now() });
    const store = o.gate ? gatedBackend(files, [o.name, o.gated ?? "dialogs"], o.gate) : files;
    return startInProcessDaemon(
      sandbox,
      { [o.name]: entry },
      { store, clock, stateDir: join(dir, "daemon"), ...(o.global ? { global: o.global } : {}) },
    );
  };
  let running = await launch();
  let closed = false;
  // On a held clock no deadline would pass: a run a failed case left stuck would hold the stop.
  const cutOff = () => running.stop(clock.held ? { deadlineMs: 0 } : {});
  const restart = async (between?: () => unknown, stop?: { deadlineMs: number }) => {
    await running.stop(stop);
    await between?.();
    if (closed) throw new Error("the gated daemon was closed during its restart");
    running = await launch();
    // Closed while it started: stopped here, as the close could not.
    if (closed) await cutOff();
    return running;
  };
  let closing: Promise<void> | undefined;
  const close = () => {
    closed = true;
    // A daemon stopped already (by a case, or by a restart) stops again at once.
    closing ??= cutOff()
      .then(() => sandbox.stop())
      .then(() => rm(dir, { recursive: true, force: true }));
    return closing;
  };
  const dm = (content: string) =>
    sandbox.control.sendAs("member@sandbox.example", { type: "direct", to: [o.email], content }).id;
  return {
    sandbox,
    get running() {
      return running;
    },
    clock,
    dir,
    dm,
    restart,
    close,
  };
}

/**
 * Stop the daemon `up` started last (the first, or one `up.restart()` started) and its sandbox,
 * and remove its state (a test's cleanup; nothing when undefined).
 */
export async function closeGatedDaemon(up: GatedDaemon | undefined): Promise<void> {
  await up?.close();
}

/**
 * The id of the message of `botEmail` beginning with `text` (in `topic`, if given), once it shows
 * the bot's two reactions: a question with two choices as buttons, sent and its buttons on it.
 */
export function questionShown(
  up: GatedDaemon,
  botEmail: string,
  text: string,
  topic?: string,
): Promise<number> {
  const { control } = up.sandbox;
  const botId = control.users().find((u) => u.email === botEmail)!.user_id;
  const its = (m: Record<string, unknown>) =>
    m.sender_id === botId && String(m.content).startsWith(text) && (topic === undefined || m.topic === topic);
  return control.waitFor(() => {
    const m = control.messages().find(its);
    const on = control.messageView(Number(m?.id))?.reactions ?? [];
    return on.filter((r) => r.user_id === botId).length === 2 && Number(m!.id);
  });
}

/**
 * {@link GatedDaemon.restart} of a daemon whose run retries a write the gate refuses: its stop
 * waits for that run until the shutdown deadline, so the test clock is moved a second at a time
 * (at most 120) until it is down; `between` as for the restart.
 */
export async function restartPastStop(up: GatedDaemon, between: () => unknown): Promise<InProcessDaemon> {
  const restarted = up.restart(between);
  let down = false;
  void restarted.finally(() => {
    down = true;
  });
  for (let s = 0; !down && s < 120; s++) await up.clock.advance(1_000);
  return restarted;
}
