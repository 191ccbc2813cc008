/**
 * The small pure parts of config loading: durations, suggestions, paths, zuliprc, exit codes.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ModuleError } from "../../src/bot/module-error.ts";
import { ConfigError } from "../../src/config/config-error.ts";
import { formatPath } from "../../src/config/config-problem.ts";
import { parseDuration } from "../../src/config/duration.ts";
import { ExitCode, exitCodeFor } from "../../src/config/exit-codes.ts";
import { resolveConfigPath } from "../../src/config/load-config.ts";
import { parseListenAddress } from "../../src/config/schema-fields.ts";
import { BothostError } from "../../src/errors/bothost-error.ts";
import { suggest } from "../../src/errors/did-you-mean.ts";

describe("parseDuration", () => {
  it.each([
    ["250ms", 250],
    ["30s", 30_000],
    ["1h30m", 5_400_000],
    ["1.5s", 1_500],
    ["2d", 172_800_000],
    [" 5m ", 300_000],
    [1500, 1500],
    [0, 0],
  ])("%s → %s ms", (input, ms) => {
    expect(parseDuration(input)).toBe(ms);
  });

  it.each(["30", "", "1 day", "s", "1h 30m", "-5s", -1, Number.NaN, Number.POSITIVE_INFINITY, true, null])(
    "refuses %s",
    (input) => {
      expect(parseDuration(input)).toBeUndefined();
    },
  );
});

describe("suggest", () => {
  it("finds close names and ignores far ones", () => {
    expect(suggest("api_kye", ["api_key", "api_key_file"])).toBe("api_key");
    expect(suggest("Modul", ["module", "email"])).toBe("module");
    expect(suggest("color", ["module", "email"])).toBeUndefined();
    expect(suggest("id", ["at"])).toBeUndefined();
  });
});

describe("formatPath", () => {
  it("writes keys with dots, indices and odd keys in brackets", () => {
    expect(formatPath(["bots", "moderator", "narrow", 0, 1])).toBe("bots.moderator.narrow[0][1]");
    expect(formatPath(["bots", "help bot", "a.b"])).toBe('bots["help bot"]["a.b"]');
    expect(formatPath([])).toBe("");
  });
});

describe("resolveConfigPath", () => {
  const cwd = "/srv/bothost";
  it("prefers --config, then BOTHOST_CONFIG, then ./bothost.yaml", () => {
    const env = { BOTHOST_CONFIG: "/etc/bothost.yaml" };
    expect(resolveConfigPath({ flag: "conf/b.yaml", env, cwd })).toBe(path.resolve(cwd, "conf/b.yaml"));
    expect(resolveConfigPath({ env, cwd })).toBe("/etc/bothost.yaml");
    expect(resolveConfigPath({ env: {}, cwd })).toBe(path.join(cwd, "bothost.yaml"));
  });

  it("treats empty values as not given", () => {
    expect(resolveConfigPath({ flag: "", env: { BOTHOST_CONFIG: "" }, cwd })).toBe(
      path.join(cwd, "bothost.yaml"),
    );
  });
});

describe("parseListenAddress", () => {
  it("splits host and port, IPv6 in brackets", () => {
    expect(parseListenAddress("127.0.0.1:8080")).toEqual({ host: "127.0.0.1", port: 8080 });
    expect(parseListenAddress("[::1]:0")).toEqual({ host: "::1", port: 0 });
    expect(parseListenAddress("localhost:65535")).toEqual({ host: "localhost", port: 65535 });
  });
  it.each(["8080", ":8080", "host:99999", "::1:8080", "host:port"])("refuses %s", (text) => {
    expect(parseListenAddress(text)).toBeUndefined();
  });
});

describe("exitCodeFor", () => {
  it("maps config and module errors to 2, everything else to 1", () => {
    expect(exitCodeFor(new ConfigError("CONFIG_INVALID", []))).toBe(ExitCode.ConfigInvalid);
    expect(exitCodeFor(new ConfigError("CONFIG_NOT_FOUND", []))).toBe(2);
    expect(exitCodeFor(new ModuleError("MODULE_INVALID", { specifier: "./x.ts" }, "is bad"))).toBe(2);
    expect(exitCodeFor(new BothostError("STATE_FAILED", "disk full"))).toBe(ExitCode.RuntimeFailure);
    expect(exitCodeFor(new Error("bug"))).toBe(1);
  });

  it("keeps the documented numbers", () => {
    expect(ExitCode).toEqual({
      Ok: 0,
      RuntimeFailure: 1,
      ConfigInvalid: 2,
      AuthFailed: 3,
      UnknownCommand: 64,
      TryAgain: 75,
    });
  });
});
