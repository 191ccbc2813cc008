import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/log/create-logger.ts";
import { logSink } from "../support/log-lines.ts";
import { flushAsync, ManualClock } from "../support/manual-clock.ts";
import { add, newQueue } from "../support/pipeline.ts";

const sink = logSink;

describe("createLogger", () => {
  const key = "Zq8xY2vB7nK4mP0sT6wE1rU9iO3aL5dF";

  it("redacts secrets at the top level and nested, in JSON lines", () => {
    const { stream, lines } = sink();
    const log = createLogger({ destination: stream, pretty: false });
    log.info(
      { api_key: key, bot: { apiKey: key, name: "echo" }, req: { headers: { authorization: key } } },
      "x",
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(key);
    const parsed = JSON.parse(lines[0] ?? "{}");
    expect(parsed.api_key).toBe("[redacted]");
    expect(parsed.bot).toEqual({ apiKey: "[redacted]", name: "echo" });
    expect(parsed.req.headers.authorization).toBe("[redacted]");
  });

  it("logs an abort's DOMException by its name, message and stack, without its legacy constants", () => {
    const { stream, lines } = sink();
    const log = createLogger({ destination: stream, pretty: false }).child({ bot: "echo" });
    log.warn({ err: new DOMException("The operation was aborted due to timeout", "TimeoutError") }, "x");
    const { err } = JSON.parse(lines[0] ?? "{}");
    expect(Object.keys(err).sort()).toEqual(["code", "message", "name", "stack", "type"]);
    expect(err).toMatchObject({ type: "DOMException", name: "TimeoutError" });
  });

  it("redacts secrets in a logged error's properties and in a child logger's lines", () => {
    const { stream, lines } = sink();
    const log = createLogger({ destination: stream, pretty: false }).child({ bot: "echo" });
    const err = Object.assign(new Error("request failed"), { config: { headers: { authorization: key } } });
    log.error({ err }, "x");
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(key);
    const parsed = JSON.parse(lines[0] ?? "{}");
    expect(parsed.err.message).toBe("request failed");
    expect(parsed.err.config.headers.authorization).toBe("[redacted]");
  });

  it("redacts in the readable form too", () => {
    const { stream, lines } = sink();
    const log = createLogger({ destination: stream, pretty: true });
    log.warn({ token: key }, "webhook refused");
    const text = lines.join("\n");
    expect(text).toContain("webhook refused");
    expect(text).not.toContain(key);
  });

  it("honours the level", () => {
    const { stream, lines } = sink();
    const log = createLogger({ destination: stream, pretty: false, level: "warn" });
    log.info("hidden");
    log.warn("shown");
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(["shown"]);
  });
});

describe("the daemon's logger on a conversation queue's lines", () => {
  it("shows the conversation of a handler that failed or timed out; secrets stay redacted", async () => {
    const { stream, lines } = sink();
    const log = createLogger({ destination: stream, pretty: false });
    const clock = new ManualClock(0);
    const queue = newQueue({ log, clock, handlerTimeoutMs: 1_000 });
    const failed = add(queue, "stream:5:deploys", async () => {
      throw Object.assign(new Error("boom"), { token: "s3cret-value" });
    });
    await failed;
    const slow = add(queue, "dm:7,9", () => new Promise(() => {}));
    await flushAsync();
    await clock.tick(1_000);
    await slow;
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed.map((l) => [l.msg, l.conversation])).toEqual([
      ["handler failed", "stream:5:deploys"],
      ["handler timed out; its signal was aborted and the queue moved on", "dm:7,9"],
    ]);
    expect(lines.join("\n")).not.toContain("s3cret-value");
  });
});
