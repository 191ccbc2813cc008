/** What the sandbox reports as its server version (a dev-build string, like a main-branch server). */
export const SANDBOX_ZULIP_VERSION = "12.0-dev+sandbox";
export const SANDBOX_MERGE_BASE = "";
/** Bumped on every start, as the server's `server_generation`. */
export const SERVER_GENERATION = Math.floor(Date.now() / 1000);
