import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { runSandboxCommand } from "../../src/cli/sandbox.ts";
import type { Sandbox } from "../../src/testing.ts";
import { basicAuth, Caller } from "../support/sandbox/fixture.ts";

function capture() {
  const stream = new PassThrough();
  let text = "";
  stream.on("data", (c) => {
    text += String(c);
  });
  return { stream, text: () => text };
}

async function runUntilStarted(argv: string[]) {
  const out = capture();
  const err = capture();
  const abort = new AbortController();
  let started!: (s: Sandbox) => void;
  const ready = new Promise<Sandbox>((r) => {
    started = r;
  });
  const done = runSandboxCommand(argv, {
    stdout: out.stream,
    stderr: err.stream,
    signal: abort.signal,
    onStarted: started,
  });
  const sandbox = await Promise.race([
    ready,
    done.then((code) => Promise.reject(new Error(`exited ${code}: ${err.text()}`))),
  ]);
  const stop = () => {
    abort.abort();
    return done;
  };
  return { sandbox, out, stop };
}

describe("bothost sandbox", () => {
  it("prints the accounts, writes zuliprc files and persists state across restarts", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "bothost-cli-"));
    const data = path.join(dir, "state.json");
    const rcDir = path.join(dir, "rc");
    const first = await runUntilStarted(["--port", "0", "--zuliprc-dir", rcDir, "--data", data]);
    const key = first.sandbox.control.apiKeyOf("bot@sandbox.example");
    expect(first.out.text()).toContain(`Sandbox listening on ${first.sandbox.url}`);
    // The chat page `bothost dev` has, served by the standalone sandbox too.
    expect(first.out.text()).toContain(`Chat page: ${first.sandbox.url}/chat/`);
    const chat = await fetch(`${first.sandbox.url}/chat/`);
    expect(chat.status).toBe(200);
    expect(chat.headers.get("content-type")).toMatch(/^text\/html/);
    expect(first.out.text()).toMatch(new RegExp(`bot@sandbox\\.example\\s+${key}\\s+bot`));
    const rc = readFileSync(path.join(rcDir, "bot@sandbox.example.zuliprc"), "utf8");
    expect(rc).toBe(`[api]\nemail=bot@sandbox.example\nkey=${key}\nsite=${first.sandbox.url}\n`);
    expect(statSync(path.join(rcDir, "bot@sandbox.example.zuliprc")).mode & 0o777).toBe(0o600);
    const bot = new Caller(first.sandbox.url, { authorization: basicAuth("bot@sandbox.example", key) });
    expect(
      (await bot.post("/messages", { type: "stream", to: "general", topic: "t", content: "kept" })).status,
    ).toBe(200);
    expect(await first.stop()).toBe(0);
    expect(first.out.text()).toContain("Sandbox stopped.");

    const second = await runUntilStarted(["--port", "0", "--data", data]);
    expect(second.sandbox.control.apiKeyOf("bot@sandbox.example")).toBe(key);
    const again = new Caller(second.sandbox.url, { authorization: basicAuth("bot@sandbox.example", key) });
    const reply = await again.get("/messages", {
      anchor: "newest",
      num_before: 5,
      num_after: 0,
      apply_markdown: false,
    });
    expect(reply.body.messages.map((m: { content: string }) => m.content)).toEqual(["kept"]);
    expect(await second.stop()).toBe(0);
  });

  it("writes an outgoing-webhook bot's token into its zuliprc, the one its deliveries carry", async () => {
    // The token is random when the org file gives none: the zuliprc is where a bot author finds
    // it, as with the server's own zuliprc download, for bothost's outgoing_webhook.token.
    const posted: Record<string, unknown>[] = [];
    const hook = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += String(c);
      });
      req.on("end", () => {
        posted.push(JSON.parse(body) as Record<string, unknown>);
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ response_not_required: true }));
      });
    });
    await new Promise<void>((r) => hook.listen(0, "127.0.0.1", r));
    const port = (hook.address() as { port: number }).port;
    const dir = mkdtempSync(path.join(tmpdir(), "bothost-cli-"));
    const org = path.join(dir, "org.yaml");
    writeFileSync(
      org,
      [
        "users:",
        "  - { email: olive@sandbox.example, full_name: Olive, role: owner }",
        "bots:",
        "  - email: hook-bot@sandbox.example",
        "    full_name: Hook",
        "    type: outgoing",
        "    owner: olive@sandbox.example",
        `    outgoing: { url: "http://127.0.0.1:${port}/hook", interface: zulip }`,
        "channels:",
        "  - { name: general, subscribers: [olive@sandbox.example, hook-bot@sandbox.example] }",
        "",
      ].join("\n"),
    );
    const rcDir = path.join(dir, "rc");
    const run = await runUntilStarted(["--port", "0", "--org", org, "--zuliprc-dir", rcDir]);
    try {
      const rc = readFileSync(path.join(rcDir, "hook-bot@sandbox.example.zuliprc"), "utf8");
      const token = /^token=(\S+)$/m.exec(rc)?.[1];
      expect(token).toMatch(/^\w{16,}$/);
      // A person's rc has no token line.
      expect(readFileSync(path.join(rcDir, "olive@sandbox.example.zuliprc"), "utf8")).not.toContain("token=");
      run.sandbox.control.sendAs("olive@sandbox.example", {
        type: "direct",
        to: ["hook-bot@sandbox.example"],
        content: "hi",
      });
      await run.sandbox.control.settleWebhooks();
      expect(posted.map((p) => p.token)).toEqual([token]);
    } finally {
      expect(await run.stop()).toBe(0);
      await new Promise((r) => hook.close(r));
    }
  });

  it("rejects bad options and bad org files with exit code 2", async () => {
    const err = capture();
    expect(await runSandboxCommand(["--port", "abc"], { stderr: err.stream })).toBe(2);
    expect(err.text()).toBe('bothost sandbox: --port must be a whole number from 0 to 65535, got "abc".\n');
    const unknown = capture();
    expect(await runSandboxCommand(["--bogus"], { stderr: unknown.stream })).toBe(2);
    expect(unknown.text()).toContain("--bogus");
    const org = capture();
    expect(await runSandboxCommand(["--port", "0", "--org", "/no/such.yaml"], { stderr: org.stream })).toBe(
      2,
    );
    expect(org.text()).toContain("Invalid sandbox org /no/such.yaml");
  });

  it("a --data file that cannot be written is said at start, exit 2, not as a crash at the first change", async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), "sandbox-data-")), "no-such-folder", "state.json");
    const err = capture();
    expect(await runSandboxCommand(["--port", "0", "--data", file], { stderr: err.stream })).toBe(2);
    expect(err.text()).toMatch(
      new RegExp(
        `^bothost sandbox: Cannot write sandbox data to ${file}: ENOENT[^\n]*Create its folder[^\n]*\n$`,
      ),
    );
  });

  it("a --zuliprc-dir that is a file is said in one line, exit 2, and the sandbox stops", async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), "sandbox-rc-")), "a-file");
    writeFileSync(file, "mine\n");
    const out = capture();
    const err = capture();
    const code = await runSandboxCommand(["--port", "0", "--zuliprc-dir", file], {
      stdout: out.stream,
      stderr: err.stream,
    });
    expect({ code, stdout: out.text(), stderr: err.text() }).toEqual({
      code: 2,
      stdout: "",
      stderr: `bothost sandbox: cannot write the zuliprc files to ${file}: EEXIST. Name a folder it can create or write (--zuliprc-dir).\n`,
    });
  });

  it("a port in use is said in one line, exit 1, with no stack trace", async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
    const port = (taken.address() as { port: number }).port;
    try {
      const err = capture();
      expect(await runSandboxCommand(["--port", String(port)], { stderr: err.stream })).toBe(1);
      expect(err.text()).toBe(
        `bothost sandbox: the sandbox cannot listen on 127.0.0.1:${port}: the port is in use: choose another port (bothost sandbox --port, or server.sandbox.port in the config; 0 picks a free one)\n`,
      );
    } finally {
      await new Promise((r) => taken.close(r));
    }
  });

  it("an address that is not this machine's is said as the host's fault, not the port's", async () => {
    // 192.0.2.1 is reserved for documentation (RFC 5737): no machine has it.
    const err = capture();
    expect(await runSandboxCommand(["--host", "192.0.2.1", "--port", "0"], { stderr: err.stream })).toBe(1);
    expect(err.text()).toBe(
      "bothost sandbox: the sandbox cannot listen on 192.0.2.1:0: no interface of this machine has that address: choose an address of this machine (bothost sandbox --host; default 127.0.0.1)\n",
    );
    const unknown = capture();
    expect(
      await runSandboxCommand(["--host", "no-such-host.invalid", "--port", "0"], { stderr: unknown.stream }),
    ).toBe(1);
    expect(unknown.text()).toContain("no such host name: choose an address of this machine");
  });

  it("prints help", async () => {
    const out = capture();
    expect(await runSandboxCommand(["--help"], { stdout: out.stream })).toBe(0);
    expect(out.text()).toContain("Usage: bothost sandbox [options]");
  });
});
