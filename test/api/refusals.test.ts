/**
 * Which server errors refuse the request as made (not retried by the failure stage) and which are
 * temporary, per code and status, and the parameter each names.
 */
import { describe, expect, it } from "vitest";
import { ApiError, AuthError, BadResponseError, NetworkError, RateLimitError } from "../../src/api/errors.ts";
import { REFUSED_CODES, serverRefusal, TEMPORARY_CODES } from "../../src/api/refusals.ts";

const endpoint = "POST /messages";
const api = (status: number, code: string, data: Record<string, unknown> = {}, msg = "refused") =>
  new ApiError({ status, code, msg, endpoint, data });

describe("serverRefusal", () => {
  it("refuses each listed code on a 4xx", () => {
    for (const code of REFUSED_CODES)
      expect(serverRefusal(api(400, code))).toMatchObject({ code, status: 400 });
    expect(serverRefusal(api(404, "BAD_REQUEST"))).toMatchObject({ status: 404 });
    expect(serverRefusal(api(409, "CHANNEL_ALREADY_EXISTS"))).toMatchObject({ status: 409 });
  });

  it("tells a code it does not list by its status", () => {
    expect(serverRefusal(api(405, "HTTP_405"))).toMatchObject({ code: "HTTP_405" });
    expect(serverRefusal(api(400, "SOME_NEWER_CODE"))).toMatchObject({ code: "SOME_NEWER_CODE" });
    for (const status of [408, 425, 500, 502, 503])
      expect(serverRefusal(api(status, `HTTP_${status}`))).toBeUndefined();
    expect(serverRefusal(api(500, "SERVER_NOT_READY"))).toBeUndefined();
  });

  it("takes the temporary codes, 401, 429 and failures without a JSON answer for temporary", () => {
    for (const code of TEMPORARY_CODES) expect(serverRefusal(api(400, code))).toBeUndefined();
    const init = { status: 401, code: "UNAUTHORIZED", msg: "Invalid API key", endpoint, data: {} };
    expect(serverRefusal(new AuthError({ ...init, email: "b@x", origin: "https://x" }))).toBeUndefined();
    const limits = { perMinute: 200, perHour: 2000 };
    const limited = { ...init, status: 429, code: "RATE_LIMIT_HIT" };
    expect(serverRefusal(new RateLimitError({ ...limited, retryAfterMs: 61_000, limits }))).toBeUndefined();
    const network = { endpoint, origin: "https://x", detail: "reset", timedOut: false, requestSent: true };
    expect(serverRefusal(new NetworkError({ ...network, cause: undefined }))).toBeUndefined();
    const page = { endpoint, status: 502, contentType: "text/html", snippet: "<html>" };
    expect(serverRefusal(new BadResponseError(page))).toBeUndefined();
    expect(serverRefusal(new Error("not the server's"))).toBeUndefined();
  });

  it("names the parameter from the error's data, or the first word of a validation message", () => {
    const missing = api(400, "REQUEST_VARIABLE_MISSING", { var_name: "content" });
    expect(serverRefusal(missing)).toMatchObject({ parameter: "content" });
    const invalid = api(400, "REQUEST_VARIABLE_INVALID", { var_name: "anchor", bad_value: "soon" });
    expect(serverRefusal(invalid)).toMatchObject({ parameter: "anchor", value: "soon" });
    const both = api(400, "REQUEST_CONFUSING_VAR", { var_name1: "topic", var_name2: "subject" });
    expect(serverRefusal(both)).toMatchObject({ parameter: "topic or subject" });
    expect(serverRefusal(api(400, "STREAM_DOES_NOT_EXIST", { stream_id: 99 }))).toMatchObject({
      parameter: "stream_id",
      value: "99",
    });
    const long = api(400, "BAD_REQUEST", {}, "title is too long (limit: 60 characters)");
    expect(serverRefusal(long)).toMatchObject({ parameter: "title", reason: long.msg });
    expect(serverRefusal(api(400, "BAD_REQUEST", {}, "Invalid message(s)"))).not.toHaveProperty("parameter");
  });
});
