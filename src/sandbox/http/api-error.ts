/**
 * An error the sandbox answers with a JSON error body, mirroring the server's JsonableError:
 * `{"result":"error","msg":…,"code":…, …extra}` with a status (400 unless said otherwise).
 */
import { BothostError } from "../../errors/bothost-error.ts";

export class ApiError extends BothostError<"SANDBOX_API_ERROR"> {
  constructor(
    readonly status: number,
    /** The wire `code`; null for the two bodies that have none (405, 500). */
    readonly wireCode: string | null,
    msg: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super("SANDBOX_API_ERROR", msg);
    this.name = "ApiError";
  }

  body(): Record<string, unknown> {
    const body: Record<string, unknown> = { result: "error", msg: this.message };
    if (this.wireCode !== null) body.code = this.wireCode;
    return { ...body, ...this.extra };
  }
}

/** 400 BAD_REQUEST, the server's default error. */
export const badRequest = (msg: string, extra: Record<string, unknown> = {}) =>
  new ApiError(400, "BAD_REQUEST", msg, extra);

/** 404 with code BAD_REQUEST (the server's ResourceNotFoundError). */
export const notFound = (msg: string) => new ApiError(404, "BAD_REQUEST", msg);

export const missingArgument = (name: string) =>
  new ApiError(400, "REQUEST_VARIABLE_MISSING", `Missing '${name}' argument`, { var_name: name });

export const unauthorized = (msg = "Not logged in: API authentication or user session required") =>
  new ApiError(401, "UNAUTHORIZED", msg, {}, { "WWW-Authenticate": 'Basic realm="zulip"' });

export const mustBe = (what: "administrator" | "owner" | "member") =>
  new ApiError(400, "UNAUTHORIZED_PRINCIPAL", `Must be an organization ${what}`);
