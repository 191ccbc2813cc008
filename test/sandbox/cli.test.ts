import { mkdtempSync, readFileSync, statSync } from "node:fs";
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

  it("prints help", async () => {
    const out = capture();
    expect(await runSandboxCommand(["--help"], { stdout: out.stream })).toBe(0);
    expect(out.text()).toContain("Usage: bothost sandbox [options]");
  });
});
