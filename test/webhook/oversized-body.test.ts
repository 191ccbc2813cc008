/**
 * An oversized or malformed request to the HTTP listener always gets an answer the client can
 * read: a body over `http.body_limit` gets 413 from Node's own fetch (undici) and from curl, not
 * a reset connection; a fuzz of malformed requests on raw sockets leaves none unanswered.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { beforeEach, describe, expect, it } from "vitest";
import { startDaemon, startE2eSandbox, useE2eCleanup, writeConfig } from "../support/e2e-daemon.ts";
import { freePort } from "../support/http-daemon.ts";

const TOKEN = "T".repeat(32);
const HELPER = "helper-bot@x.example";
const PATH = "/hooks/helper";

useE2eCleanup();
let url = "";

/** `bothost run` in its own process (as a server runs it), one outgoing-webhook bot on its listener. */
beforeEach(async () => {
  const port = await freePort();
  const sandbox = await startE2eSandbox({
    users: [{ email: "olive@x.example", full_name: "Olive", role: "owner" }],
    bots: [
      {
        email: HELPER,
        full_name: "Helper",
        type: "outgoing",
        owner: "olive@x.example",
        outgoing: { url: `http://127.0.0.1:${port}${PATH}`, token: TOKEN, interface: "zulip" },
      },
    ],
    channels: [{ name: "general", subscribers: ["olive@x.example", HELPER] }],
  });
  const config = await writeConfig(
    sandbox,
    { helper: { email: HELPER, extra: `outgoing_webhook:\n  path: ${PATH}\n  token: ${TOKEN}` } },
    { global: `http:\n  listen: 127.0.0.1:${port}` },
  );
  await startDaemon(config);
  url = `http://127.0.0.1:${port}`;
});

/** 3 MB of JSON, three times the default `http.body_limit`. */
const big = JSON.stringify({ token: TOKEN, data: "x".repeat(3 * 1024 * 1024) });

/** POST a streamed body (no declared length) with Node's fetch. */
const postStream = (body: ReadableStream) =>
  fetch(`${url}${PATH}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
    duplex: "half",
  } as RequestInit);

describe("a body over http.body_limit", () => {
  it("gets a readable 413 from Node's fetch, body declared or streamed", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${url}${PATH}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: big,
      });
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual({ result: "error", msg: "request body is larger than 1048576 bytes" });
    }
    const chunks = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 48; i++) controller.enqueue(new TextEncoder().encode("y".repeat(64 * 1024)));
        controller.close();
      },
    });
    const streamed = await postStream(chunks);
    expect(streamed.status).toBe(413);
    await streamed.arrayBuffer();
  });

  it("gets a readable 413 from Node's fetch while the client is still sending", async () => {
    let sent = 0;
    const slow = new ReadableStream({
      async pull(controller) {
        if (sent++ >= 48) return controller.close();
        await new Promise((resolve) => setTimeout(resolve, 5));
        controller.enqueue(new TextEncoder().encode("z".repeat(64 * 1024)));
      },
    });
    const res = await postStream(slow);
    expect(res.status).toBe(413);
    await res.arrayBuffer();
  });

  it.skipIf(!existsSync("/usr/bin/curl"))("gets 413 from curl", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "bothost-413-"));
    const file = path.join(dir, "big.json");
    await writeFile(file, big);
    const { stdout } = await promisify(execFile)("curl", [
      "-s",
      "-o",
      "/dev/null",
      "-w",
      "%{http_code}",
      "-H",
      "content-type: application/json",
      "--data-binary",
      `@${file}`,
      `${url}${PATH}`,
    ]);
    await rm(dir, { recursive: true });
    expect(stdout).toBe("413");
  });
});

/**
 * One request on its own connection: what came back before the server closed it (or 10 s passed).
 * `readAfterSending`: read nothing until the whole request is written, as simple clients do.
 */
function exchange(
  port: number,
  chunks: readonly Buffer[],
  halfClose: boolean,
  readAfterSending = false,
): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let got = "";
    const timer = setTimeout(() => socket.destroy(), 10_000);
    socket.on("data", (d) => {
      got += d.toString("latin1");
      // Such a client reads the answer's head, then is done (the server's close is not its concern).
      if (readAfterSending && got.includes("\r\n\r\n")) socket.destroy();
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(got);
    });
    socket.on("connect", () => {
      if (readAfterSending) socket.pause();
      for (const c of chunks.slice(0, -1)) socket.write(c);
      socket.write(chunks.at(-1)!, () => socket.resume());
      if (halfClose) socket.end();
    });
  });
}

/** Malformed requests of many kinds, picked by a seeded generator (the same list each run). */
function malformed(seed: number, count: number): { chunks: Buffer[]; halfClose: boolean }[] {
  let x = seed;
  const rand = (n: number) => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x % n;
  };
  const body = JSON.stringify({ token: TOKEN, data: "q".repeat(2 * 1024 * 1024) });
  const kinds: Array<() => string | Buffer[]> = [
    () => "GARBAGE\r\n\r\n",
    () => `POST ${PATH} HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n`,
    () => `POST ${PATH} HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n`,
    () => `POST ${PATH} HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nabc`,
    () => `POST ${PATH} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n`,
    () =>
      `POST ${PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{nope`,
    () => `GET / HTTP/1.1\r\nHost: x\r\nX: ${"h".repeat(20_000)}\r\n\r\n`,
    () =>
      `POST ${PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"a":`,
    () => [
      Buffer.from(
        `POST ${PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      ),
      Buffer.from(body),
    ],
    () => [
      Buffer.from(
        `POST ${PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
      ),
      Buffer.from(`${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`),
    ],
    () => `POST ${PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\nbody`,
    () => `\x00\x01\x02 / HTTP/1.1\r\n\r\n`,
  ];
  return Array.from({ length: count }, () => {
    const made = kinds[rand(kinds.length)]!();
    const chunks = typeof made === "string" ? [Buffer.from(made, "latin1")] : made;
    return { chunks, halfClose: rand(2) === 0 };
  });
}

describe("a client that reads only after sending its whole request", () => {
  it("reads the 413 for a body 4 times the limit, declared or chunked", async () => {
    const port = Number(new URL(url).port);
    const body = Buffer.from(JSON.stringify({ token: TOKEN, data: "w".repeat(4 * 1024 * 1024) }));
    const head = `POST ${PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n`;
    const declared = [Buffer.from(`${head}Content-Length: ${body.length}\r\n\r\n`), body];
    const chunked = [
      Buffer.from(`${head}Transfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n`),
      body,
      Buffer.from("\r\n0\r\n\r\n"),
    ];
    for (const chunks of [declared, chunked]) {
      for (const halfClose of [true, false]) {
        const got = await exchange(port, chunks, halfClose, true);
        expect(got).toMatch(/^HTTP\/1\.1 413 /);
      }
    }
  });
});

describe("malformed requests", () => {
  it("each get an HTTP answer: 200 of them, 20 at a time", async () => {
    const port = Number(new URL(url).port);
    const cases = malformed(39, 200);
    const unanswered: string[] = [];
    for (let i = 0; i < cases.length; i += 20) {
      const got = await Promise.all(cases.slice(i, i + 20).map((c) => exchange(port, c.chunks, c.halfClose)));
      got.forEach((text, j) => {
        if (!/^HTTP\/1\.1 [1-5]\d\d /.test(text.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, ""))) {
          const c = cases[i + j]!;
          unanswered.push(
            `${JSON.stringify(c.chunks[0]!.toString("latin1").slice(0, 120))} (half-close: ${c.halfClose}): ${JSON.stringify(text.slice(0, 40))}`,
          );
        }
      });
    }
    expect(unanswered).toEqual([]);
  });
});
