/**
 * `bothost reload` with no admin channel answering falls back to SIGHUP to the pid in the state
 * directory's LOCK. A LOCK left by a daemon killed with kill -9, or written by a daemon on another
 * host sharing the directory, names a pid that is not a daemon here: SIGHUP ends most processes, so
 * it goes only to a live process of this host that started before the lock was taken. A real CLI
 * process; the lock's "holder" a node process that reports each signal it gets.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, expect, it } from "vitest";
import { acquireLock } from "../../src/state/_files.ts";
import { bootId, pidNamespace, startTicks } from "../../src/state/proc-identity.ts";
import { assertBuilt, runCli } from "../support/cli.ts";

let dir: string;
let holder: ChildProcess | undefined;
let heard = "";

beforeAll(() => assertBuilt());

afterEach(async () => {
  holder?.kill("SIGKILL");
  holder = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A process that prints the name of each signal it gets; resolves once it listens. */
async function startHolder(): Promise<ChildProcess> {
  const script =
    'for (const s of ["SIGHUP", "SIGUSR2"]) process.on(s, () => console.log(s)); console.log("ready"); setInterval(() => {}, 1e9);';
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  heard = "";
  await new Promise<void>((ready) =>
    child.stdout!.on("data", (chunk: Buffer) => {
      heard += chunk.toString();
      if (heard.includes("ready\n")) ready();
    }),
  );
  return child;
}

/** The signals the holder got before a SIGUSR2 sent now (signals reach it in the order sent). */
async function signalsHeard(child: ChildProcess): Promise<string[]> {
  child.kill("SIGUSR2");
  await new Promise<void>((done) => {
    const check = () => heard.includes("SIGUSR2\n") && done();
    child.stdout!.on("data", check);
    check();
  });
  return heard.split("\n").filter((line) => line.startsWith("SIG") && line !== "SIGUSR2");
}

/**
 * A state directory whose LOCK names `pid` on `host`, taken at `startedAt` (and what else the
 * taker wrote of itself: `more`); its config file.
 */
async function lockedState(pid: number, host: string, startedAt: string, more: object = {}): Promise<string> {
  dir = await mkdtemp(join(tmpdir(), "bothost-reload-signal-"));
  const state = join(dir, "state");
  await mkdir(state);
  const lock = { pid, hostname: host, startedAt, ...more, nonce: "x" };
  await writeFile(join(state, "LOCK"), `${JSON.stringify(lock)}\n`);
  const file = join(dir, "bothost.yaml");
  await writeFile(
    file,
    "server:\n  url: http://127.0.0.1:9\nstate:\n  path: ./state\nbots:\n  echo:\n    module: ./echo.ts\n    email: e@x.example\n    api_key: k\n",
  );
  return file;
}

/** What a daemon's LOCK says of it beyond pid, host and time (as acquireLock writes them). */
const itself = async (pid: number) => ({
  ticks: await startTicks(pid),
  pidns: await pidNamespace(),
  boot: await bootId(),
});

it.each([
  ["a daemon on another host", () => "another-host", () => new Date().toISOString(), async () => ({})],
  [
    "a lock taken before its pid's process started (the pid reused)",
    hostname,
    () => "2020-01-01T00:00:00.000Z",
    async () => ({}),
  ],
  [
    "a lock whose taker started at another tick (the pid reused)",
    hostname,
    () => new Date().toISOString(),
    async (pid: number) => ({ ...(await itself(pid)), ticks: ((await startTicks(pid)) ?? 0) + 1 }),
  ],
  [
    "a lock taken before this host's last boot (its pid and tick a new process's)",
    hostname,
    () => new Date().toISOString(),
    async (pid: number) => ({ ...(await itself(pid)), boot: "an-earlier-boot" }),
  ],
  [
    "a daemon in a container named as this host (its own pid namespace)",
    hostname,
    () => new Date().toISOString(),
    async (pid: number) => ({ ...(await itself(pid)), pidns: "pid:[1]" }),
  ],
])(
  "no SIGHUP to a pid the LOCK names for %s: no daemon answers, exit 1",
  async (_, host, startedAt, more) => {
    holder = await startHolder();
    const file = await lockedState(holder.pid!, host(), startedAt(), await more(holder.pid!));
    const reload = await runCli(["reload", "-c", file]);
    expect(reload.code).toBe(1);
    expect(reload.stdout).toBe("");
    expect(reload.stderr).toMatch(
      /no daemon answers: .* No SIGHUP sent: .*LOCK names pid \d+ on .*\[DAEMON_UNREACHABLE\]\n$/,
    );
    expect(await signalsHeard(holder)).toEqual([]);
  },
);

// The second: the wall clock stepped ahead after the daemon took the lock (time synced after
// boot): its start read from /proc/stat's btime is then later than the lock's time, yet it is the
// lock's taker, as its start tick in the lock says.
it.each([
  ["a live process of this host that took the lock", 0, false],
  ["the lock's taker, after the clock stepped ahead since", 3_600_000, true],
])("%s gets the SIGHUP", async (_, behindMs, withTicks) => {
  holder = await startHolder();
  const taken = new Date(Date.now() - behindMs).toISOString();
  const ticks = withTicks ? [await itself(holder.pid!)] : [];
  const file = await lockedState(holder.pid!, hostname(), taken, ...ticks);
  const reload = await runCli(["reload", "-c", file]);
  expect(reload).toMatchObject({
    code: 0,
    stdout: `Sent SIGHUP to the daemon (pid ${holder.pid}); its log says what changed.\n`,
  });
  expect(await signalsHeard(holder)).toEqual(["SIGHUP"]);
});

it("a daemon's LOCK says its start tick, pid namespace and boot", async () => {
  dir = await mkdtemp(join(tmpdir(), "bothost-reload-signal-"));
  const release = await acquireLock(dir);
  const lock = JSON.parse(await readFile(join(dir, "LOCK"), "utf8"));
  await release();
  expect(lock).toMatchObject({
    pid: process.pid,
    ticks: await startTicks(process.pid),
    pidns: await pidNamespace(),
    boot: await bootId(),
  });
  expect(lock.ticks).toEqual(expect.any(Number));
  expect(lock.boot).toEqual(expect.any(String));
});
