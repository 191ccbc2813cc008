import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { buildConnector, Connection, ConnectionPool, UNDICI_VERSION } from "../../src/api/undici-core.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));

describe("undici, as the client loads it", () => {
  it("is its connection and pool modules, without the fetch and WebSocket stack nor response streams", async () => {
    // A fresh process: this one has loaded undici's index through the tests' own imports.
    const script = `
      import { createServer } from "node:http";
      import { createRequire } from "node:module";
      const mod = await import("./src/api/create-client.ts");
      const { createClient } = mod.createClient ? mod : mod.default;
      const server = createServer((req, res) => {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ result: "success", msg: "", user_id: 7, email: "probe-bot@x.org", full_name: "Probe" }));
      });
      await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
      const url = "http://127.0.0.1:" + server.address().port;
      const client = createClient({ url, email: "probe-bot@x.org", apiKey: "0123456789abcdef" });
      const me = await client.request("GET", "/users/me");
      server.closeAllConnections();
      server.close();
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter((f) => f.includes("undici"));
      console.log(JSON.stringify({ me: me.email, loaded }));
    `;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "jiti/register", "--input-type=module", "-e", script],
      { cwd: root },
    );
    const { me, loaded } = JSON.parse(stdout) as { me: string; loaded: string[] };
    expect(me).toBe("probe-bot@x.org");
    expect(loaded.some((f) => f.endsWith("dispatcher/client.js"))).toBe(true);
    expect(loaded.filter((f) => /[/\\]lib[/\\](web|mock|cache|api)[/\\]/.test(f))).toEqual([]);
  });
});

describe("undici's internals behind src/api/undici-core.ts", () => {
  const json = (file: string) => JSON.parse(readFileSync(`${root}/${file}`, "utf8"));

  it("are those of the one release package.json and package-lock.json pin exactly", () => {
    expect(json("package.json").dependencies.undici).toBe(UNDICI_VERSION);
    const lock = json("package-lock.json").packages;
    expect(lock[""].dependencies.undici).toBe(UNDICI_VERSION);
    expect(lock["node_modules/undici"].version).toBe(UNDICI_VERSION);
  });

  it("are the very classes and function undici's index exports, with the methods the client calls", () => {
    const undici = createRequire(import.meta.url)("undici");
    expect(Connection).toBe(undici.Client);
    expect(ConnectionPool).toBe(undici.Pool);
    expect(buildConnector).toBe(undici.buildConnector);
    for (const made of [Connection, ConnectionPool]) {
      for (const method of ["dispatch", "close", "destroy"])
        expect(typeof (made.prototype as unknown as Record<string, unknown>)[method], method).toBe(
          "function",
        );
    }
    expect(typeof buildConnector({})).toBe("function");
  });
});
