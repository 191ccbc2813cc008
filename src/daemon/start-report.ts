/** What a daemon's start says of its bots (the "daemon started" line, `bothost run`'s exit). */
export interface StartReport {
  started: string[];
  /** Bots whose credentials the server rejected (they are stopped; the others run). */
  authFailed: string[];
  /** Bots that failed to start for another reason (setup threw, …). */
  failed: { name: string; error: unknown }[];
  /** Bots another instance runs now (cluster mode); this one takes them over if that one dies. */
  standby: string[];
}

export function emptyReport(): StartReport {
  return { started: [], authFailed: [], failed: [], standby: [] };
}
