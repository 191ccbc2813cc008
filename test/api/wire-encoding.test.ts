import { describe, expect } from "vitest";
import { encodeParams, path } from "../../src/api/encode.ts";
import { API_KEY, EMAIL, test } from "../support/api/client-fixture.ts";
import { endpointCases } from "../support/api/endpoint-cases.ts";
import { success } from "../support/api/test-server.ts";

const basic = `Basic ${Buffer.from(`${EMAIL}:${API_KEY}`).toString("base64")}`;

describe("wire encoding of every endpoint", () => {
  test.for(endpointCases)("$name", async (row, { server, makeClient }) => {
    server.reply(success(row.response));
    const result = await row.call(makeClient());
    expect(server.requests).toHaveLength(1);
    const req = server.requests[0]!;
    expect(`${req.method} ${req.path}`).toBe(`${row.method} /api/v1${row.path}`);
    if (row.method === "GET") {
      expect(req.query).toEqual(row.params);
      expect(req.rawBody).toBe("");
    } else {
      expect(req.body).toEqual(row.params);
      expect(req.query).toEqual({});
      expect(req.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    }
    // GET /server_settings is the one call sent without credentials.
    expect(req.headers.authorization).toBe(row.path === "/server_settings" ? undefined : basic);
    if (row.returns !== undefined) expect(result).toEqual(row.returns);
  });
});

describe("encodeParams", () => {
  test("sends strings raw and JSON-encodes everything else; undefined is left out", () => {
    const encoded = encodeParams({
      s: "true",
      n: 42,
      f: 0.5,
      b: false,
      nil: null,
      arr: ["a"],
      obj: { k: [1] },
      gone: undefined,
    });
    expect([...encoded]).toEqual([
      ["s", "true"],
      ["n", "42"],
      ["f", "0.5"],
      ["b", "false"],
      ["nil", "null"],
      ["arr", '["a"]'],
      ["obj", '{"k":[1]}'],
    ]);
  });

  test("path`` encodes each interpolated value as one segment", () => {
    expect(path`/users/${"a b/c@x.org"}/x/${7}`).toBe("/users/a%20b%2Fc%40x.org/x/7");
  });
});
