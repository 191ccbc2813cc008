/**
 * The admin socket on its own: the admin routes over a real Unix socket (HTTP, no token), its
 * file mode, and what happens when the path is taken by a live daemon, left by a dead one, or
 * held by something that is not a socket; and where the socket goes when the state directory's
 * path is too long for one.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { Agent, request } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN_SOCKET_NAME,
  adminSocketPath,
  MAX_SOCKET_PATH_BYTES,
  runtimeDir,
} from "../../src/config/admin-socket-path.ts";
import { dialogDesk } from "../../src/daemon/dialog-desk.ts";
import { AdminSocket } from "../../src/http/admin-socket.ts";
import type { DaemonStatus } from "../../src/http/daemon-status.ts";
import { createLogger } from "../../src/log/create-logger.ts";
import { DeadLetterOffice } from "../../src/state/dead-letter-office.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";
import { realClock } from "../../src/time/clock.ts";

let dir: string;
const lines: Record<string, unknown>[] = [];
const log = createLogger({
  pretty: false,
  level: "info",
  destination: new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
      done();
    },
  }),
});
const status: DaemonStatus = {
  version: "0.0.0",
  pid: process.pid,
  startedAt: "2026-11-26T10:00:00.000Z",
  configLoadedAt: "2026-11-26T10:00:00.000Z",
  uptimeSeconds: 1,
  bots: [],
  recentFailures: [],
};
const open: AdminSocket[] = [];

async function openSocket(socket: string, ifTaken: "fail" | "skip" = "fail") {
  const letters = new DeadLetterOffice(
    new MemoryStore(),
    new Map([["mod", { max: 10, redact: (t: string) => t }]]),
    realClock,
  );
  await letters.of("mod").add({
    source: "queue",
    event: { type: "message", id: 1 },
    error: new Error("boom"),
    attempts: 1,
    firstFailedAt: "2026-11-26T10:00:00.000Z",
    lastFailedAt: "2026-11-26T10:00:00.000Z",
  });
  const admin = await AdminSocket.open({
    path: socket,
    ifTaken,
    log,
    handlers: {
      letters: () => letters,
      status: async () => status,
      reload: async () => ({ add: [] }),
      ...dialogDesk([]),
    },
  });
  if (admin) open.push(admin);
  return admin;
}

async function ask(socket: string, method: "GET" | "POST", url: string, body?: string) {
  const dispatcher = new Agent({ connect: { socketPath: socket } });
  try {
    const res = await request(`http://localhost${url}`, {
      method,
      dispatcher,
      ...(body === undefined ? {} : { body, headers: { "content-type": "application/json" } }),
    });
    return { status: res.statusCode, type: res.headers["content-type"], body: await res.body.text() };
  } finally {
    await dispatcher.close();
  }
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "bothost-sock-"));
});
afterEach(async () => {
  for (const admin of open.splice(0)) await admin.close();
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("AdminSocket", () => {
  it("serves the admin routes with no token, owner-only, and removes its file on close", async () => {
    const socket = path.join(dir, "a.sock");
    const admin = (await openSocket(socket))!;
    expect((await stat(socket)).mode & 0o777).toBe(0o600);
    expect(JSON.parse((await ask(socket, "GET", "/admin/status")).body)).toEqual(status);
    expect(JSON.parse((await ask(socket, "GET", "/admin/failed?bot=mod")).body)).toMatchObject([
      { id: "mod/1", bot: "mod", error: { message: "boom" } },
    ]);
    expect(await ask(socket, "GET", "/admin/failed/mod/7")).toMatchObject({
      status: 404,
      body: '{"error":"no dead letter mod/7"}',
    });
    expect(await ask(socket, "POST", "/admin/failed/retry", '{"ids":"mod/1"}')).toMatchObject({
      status: 400,
      body: expect.stringContaining('the body must be {\\"ids\\"'),
    });
    expect(await ask(socket, "POST", "/admin/failed/drop", "{not json")).toMatchObject({
      status: 400,
      body: '{"error":"the body is not JSON"}',
    });
    expect(JSON.parse((await ask(socket, "POST", "/admin/failed/drop", '{"ids":["mod/1"]}')).body)).toEqual({
      done: ["mod/1"],
      missing: [],
    });
    expect(await ask(socket, "GET", "/admin/nothing")).toMatchObject({
      status: 404,
      body: '{"error":"no route for GET /admin/nothing"}',
    });
    expect((await ask(socket, "GET", "/status")).type).toBe("text/html; charset=utf-8");
    open.splice(open.indexOf(admin), 1);
    await admin.close();
    await expect(stat(socket)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("refuses a path a live daemon answers on, or skips it for a shared Redis state", async () => {
    const socket = path.join(dir, "b.sock");
    await openSocket(socket);
    await expect(openSocket(socket)).rejects.toMatchObject({
      code: "ADMIN_SOCKET_IN_USE",
      message: expect.stringContaining(
        `another bothost daemon is running with this state: it answers on ${socket}`,
      ),
    });
    expect(await openSocket(socket, "skip")).toBeUndefined();
    // Said with how an operator reaches this one meanwhile.
    expect(
      lines.find((l) => l.msg === "another daemon answers on the admin socket: this one runs without it"),
    ).toMatchObject({
      socket,
      fix: expect.stringContaining(
        "to reach this one meanwhile, start it from a config file of its own (a copy, not a symlink) or ask the admin routes of its http.listen",
      ),
    });
    // The first daemon still answers.
    expect((await ask(socket, "GET", "/admin/status")).status).toBe(200);
  });

  it("replaces a socket nobody answers on, and keeps a file that is not a socket", async () => {
    const socket = path.join(dir, "c.sock");
    // What a killed daemon leaves: the file, with no process behind it.
    const script = `require("node:net").createServer().listen(${JSON.stringify(socket)}, () => process.kill(process.pid, "SIGKILL"))`;
    spawnSync(process.execPath, ["-e", script]);
    expect((await stat(socket)).isSocket()).toBe(true);
    await openSocket(socket);
    expect((await ask(socket, "GET", "/admin/status")).status).toBe(200);

    const long = path.join(dir, "y".repeat(MAX_SOCKET_PATH_BYTES), "admin.sock");
    await expect(openSocket(long)).rejects.toMatchObject({
      code: "ADMIN_SOCKET_FAILED",
      message: expect.stringContaining(`is longer than ${MAX_SOCKET_PATH_BYTES} bytes`),
    });

    const plain = path.join(dir, "plain.sock");
    await writeFile(plain, "not a socket");
    await expect(openSocket(plain)).rejects.toMatchObject({
      code: "ADMIN_SOCKET_FAILED",
      message: `${plain} exists and is not a socket: move it away so the daemon can make its admin socket there`,
    });
  });
});

describe("adminSocketPath", () => {
  it("is in the state directory, or in a per-user folder when that path is too long", async () => {
    const short = path.join(dir, "state");
    expect(adminSocketPath({ path: short })).toBe(path.join(short, ADMIN_SOCKET_NAME));
    const long = path.join(dir, "x".repeat(MAX_SOCKET_PATH_BYTES));
    const fallback = adminSocketPath({ path: long });
    expect(path.dirname(fallback)).toBe(runtimeDir());
    expect(fallback).toMatch(/\/[0-9a-f]{16}\.sock$/);
    expect(adminSocketPath({ path: `${long}/` })).toBe(fallback);
    expect(adminSocketPath({ path: `${long}y` })).not.toBe(fallback);

    await openSocket(fallback);
    const folder = await stat(runtimeDir());
    expect(folder.mode & 0o777).toBe(0o700);
    expect((await ask(fallback, "GET", "/admin/status")).status).toBe(200);
  });

  it("for Redis state, depends on the config file; on Windows it is a named pipe", () => {
    const a = adminSocketPath({ redis: true, configFile: path.join(dir, "a.yaml") });
    expect(path.dirname(a)).toBe(runtimeDir());
    expect(adminSocketPath({ redis: true, configFile: path.join(dir, "b.yaml") })).not.toBe(a);
    expect(adminSocketPath({ path: "C:\\bothost\\state" }, "win32")).toMatch(
      /^\\\\\.\\pipe\\bothost-[0-9a-f]{16}$/,
    );
  });
});
