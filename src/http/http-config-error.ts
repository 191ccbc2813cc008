import { BothostError } from "../errors/bothost-error.ts";

/** The HTTP side cannot start as configured; the message says what to change. */
export class HttpConfigError extends BothostError<"HTTP_CONFIG_INVALID" | "HTTP_LISTEN_FAILED"> {
  override readonly name = "HttpConfigError";
}
