/**
 * bothost/testing: what a bot's own tests import, chiefly the in-memory sandbox server.
 *
 * @example
 * ```ts
 * import { startSandbox } from "bothost/testing";
 * const sandbox = await startSandbox();
 * const apiKey = sandbox.control.apiKeyOf("bot@sandbox.example");
 * ```
 */

// ── Sandbox server ───────────────────────────────────────────────────────────────────────────
export { SandboxControlError } from "./sandbox/control.ts";
export { SandboxOrgError } from "./sandbox/org/load-org.ts";
export { SandboxDataError } from "./sandbox/persistence.ts";
export { startSandbox } from "./sandbox/start-sandbox.ts";
export type {
  Clock,
  FailOptions,
  NewSandboxUser,
  OrgInput,
  PathFilter,
  QueueInfo,
  RateRule,
  RequestLogEntry,
  ResponseRecord,
  Sandbox,
  SandboxControl,
  SandboxOptions,
  SandboxUser,
  SendAsInput,
} from "./sandbox/types.ts";
