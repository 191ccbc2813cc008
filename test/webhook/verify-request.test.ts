import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { safeEqual } from "../../src/webhook/constant-time.ts";
import { verifyRequest } from "../../src/webhook/verify-request.ts";

const body = Buffer.from('{"a":1}');
const hmac = (secret: string, data: string) => createHmac("sha256", secret).update(data).digest("hex");

describe("verifyRequest", () => {
  it("github: accepts upper-case hex, refuses other algorithms", () => {
    const sig = hmac("s", body.toString()).toUpperCase();
    expect(
      verifyRequest({ type: "github", secret: "s" }, { "x-hub-signature-256": `sha256=${sig}` }, body, 0),
    ).toEqual({
      ok: true,
    });
    expect(
      verifyRequest(
        { type: "github", secret: "s" },
        { "x-hub-signature-256": `sha1=${sig.slice(0, 40)}` },
        body,
        0,
      ),
    ).toEqual({
      ok: false,
      reason: "x-hub-signature-256 does not begin with sha256= (want sha256=<64 hex digits>)",
    });
    const github = (value: string) =>
      verifyRequest({ type: "github", secret: "s" }, { "x-hub-signature-256": value }, body, 0);
    expect(github("sha256=00")).toEqual({
      ok: false,
      reason: "x-hub-signature-256 has 2 hex digits after sha256=, not 64 (want sha256=<64 hex digits>)",
    });
    expect(github(`sha256=${"z".repeat(64)}`)).toEqual({
      ok: false,
      reason: "x-hub-signature-256 is not hexadecimal after sha256= (want sha256=<64 hex digits>)",
    });
    expect(verifyRequest({ type: "github", secret: "s" }, {}, body, 0)).toEqual({
      ok: false,
      reason: "missing x-hub-signature-256 header",
    });
  });

  it("hmac: the window is checked on both sides; a valid signature yields a replay key", () => {
    const verify = { type: "hmac" as const, secret: "k", toleranceSeconds: 10 };
    const at = (t: number) => ({ "x-signature": `t=${t},v1=${hmac("k", `${t}.${body}`)}` });
    const ok = verifyRequest(verify, at(1000), body, 1005);
    expect(ok).toEqual({ ok: true, replayKey: `sig:${hmac("k", `1000.${body}`)}` });
    expect(verifyRequest(verify, at(1020), body, 1005)).toEqual({
      ok: false,
      reason: "timestamp in x-signature (t=…) is outside the 10 s window",
    });
    expect(verifyRequest(verify, { "x-signature": "v1=abc" }, body, 1005)).toEqual({
      ok: false,
      reason: "missing timestamp in x-signature (t=…)",
    });
    const signedAt = (t: string) => ({ "x-signature": `t=${t},v1=${hmac("k", `${t}.${body}`)}` });
    expect(verifyRequest(verify, signedAt("abc"), body, 1005)).toEqual({
      ok: false,
      reason: "timestamp in x-signature (t=…) is not whole unix seconds",
    });
    expect(verifyRequest(verify, signedAt("1000000"), body, 1005)).toMatchObject({ ok: false });
    expect(verifyRequest(verify, signedAt("1700000000000"), body, 1005)).toEqual({
      ok: false,
      reason: "timestamp in x-signature (t=…) is not whole unix seconds (milliseconds?)",
    });
    expect(verifyRequest(verify, { "x-signature": "t=1000" }, body, 1005)).toEqual({
      ok: false,
      reason: "missing v1=<hex> signature in x-signature",
    });
  });

  it("slack: signs v0:<t>:<body>; its toleranceSeconds holds on both sides; a valid one yields a replay key", () => {
    const verify = { type: "slack" as const, secret: "k", toleranceSeconds: 10 };
    const at = (t: number) => ({
      "x-slack-request-timestamp": String(t),
      "x-slack-signature": `v0=${hmac("k", `v0:${t}:${body}`)}`,
    });
    expect(verifyRequest(verify, at(1000), body, 1010)).toEqual({
      ok: true,
      replayKey: `sig:${hmac("k", `v0:1000:${body}`)}`,
    });
    const outside = {
      ok: false,
      reason: "timestamp in x-slack-request-timestamp is outside the 10 s window",
    };
    expect(verifyRequest(verify, at(1000), body, 1011)).toEqual(outside);
    expect(verifyRequest(verify, at(1000), body, 989)).toEqual(outside);
    const hmacStyle = { ...at(1000), "x-slack-signature": `v0=${hmac("k", `1000.${body}`)}` };
    expect(verifyRequest(verify, hmacStyle, body, 1000)).toEqual({
      ok: false,
      reason: "x-slack-signature does not match the body",
    });
  });

  it("secret: custom header names are case-insensitive; none accepts anything", () => {
    const verify = { type: "secret" as const, secret: "abc", header: "X-Gitlab-Token" };
    expect(verifyRequest(verify, { "x-gitlab-token": "abc" }, body, 0)).toEqual({ ok: true });
    expect(verifyRequest(verify, {}, body, 0)).toEqual({
      ok: false,
      reason: "missing X-Gitlab-Token header",
    });
    expect(verifyRequest({ type: "none" }, {}, body, 0)).toEqual({ ok: true });
  });
});

describe("safeEqual", () => {
  it("compares content and length", () => {
    expect(safeEqual("abc", "abc")).toBe(true);
    expect(safeEqual("abc", "abd")).toBe(false);
    expect(safeEqual("abc", "abcd")).toBe(false);
    expect(safeEqual("", "")).toBe(true);
  });
});
