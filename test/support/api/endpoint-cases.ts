/**
 * One row per typed method (and per parameter form): the call, and exactly what must reach the
 * server. Shared by the wire-encoding test and the OpenAPI shape test. Rows live in
 * cases-*.ts by resource.
 */
import type { Client } from "../../../src/api/create-client.ts";
import { channelCases } from "./cases-channels.ts";
import { messagingCases } from "./cases-messaging.ts";
import { peopleCases } from "./cases-people.ts";

export interface EndpointCase {
  name: string;
  /** The spec's operation: method and path template (without /api/v1). */
  spec: string;
  call: (client: Client) => Promise<unknown>;
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** The raw path after /api/v1, path parameters encoded. */
  path: string;
  /** Decoded query (GET) or form body (others), exactly. */
  params: Record<string, string>;
  /** Success data the server answers with. */
  response?: Record<string, unknown>;
  /** What the method returns for that response (checked when given). */
  returns?: unknown;
}

export const endpointCases: EndpointCase[] = [...messagingCases, ...peopleCases, ...channelCases];
