import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/log/create-logger.ts";

function sink() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split("\n").filter(Boolean));
      done();
    },
  });
  return { stream, lines };
}

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
