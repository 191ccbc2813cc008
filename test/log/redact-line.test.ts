import { describe, expect, it } from "vitest";
import { redactLine } from "../../src/log/redact-line.ts";

const line = (obj: unknown) => `${JSON.stringify(obj)}\n`;
const parsed = (obj: unknown) => JSON.parse(redactLine(line(obj))) as Record<string, unknown>;

describe("redactLine", () => {
  it("leaves a line without a secret key as it is (the same string)", () => {
    const text = line({ level: 30, msg: "event queue registered", queueId: "q1", monkey: 1, keys: ["a"] });
    expect(redactLine(text)).toBe(text);
  });

  it("redacts a secret key's value at any depth, whatever its type", () => {
    expect(
      parsed({
        api_key: "k1",
        bot: { apiKey: "k2", name: "echo" },
        err: { config: { headers: { authorization: "Basic abc", accept: "json" } } },
        token: { nested: { key: "k3" }, list: [1, "]", "}"] },
        password: 1234,
        secret: null,
        webhook_secret: true,
        after: "kept",
      }),
    ).toEqual({
      api_key: "[redacted]",
      bot: { apiKey: "[redacted]", name: "echo" },
      err: { config: { headers: { authorization: "[redacted]", accept: "json" } } },
      token: "[redacted]",
      password: "[redacted]",
      secret: "[redacted]",
      webhook_secret: "[redacted]",
      after: "kept",
    });
  });

  it("redacts values with escaped quotes, and never text inside a string value", () => {
    expect(parsed({ key: 'a"b\\"c', msg: 'the "token": "x" was refused' })).toEqual({
      key: "[redacted]",
      msg: 'the "token": "x" was refused',
    });
  });

  it("redacts the last key of an object and of the line", () => {
    expect(parsed({ a: { Authorization: "x" }, key: "y" })).toEqual({
      a: { Authorization: "[redacted]" },
      key: "[redacted]",
    });
  });
});
