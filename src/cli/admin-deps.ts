/**
 * What the admin commands (status, dialogs, reload, failed) need once their arguments are parsed:
 * the config reader and the daemon client, with what they import (zod, yaml, undici). The commands
 * load this with import() after parsing, so that `--help` and a usage error load none of it.
 */
export { configProblemsOnDisk, loadConfigWithPlaceholders, readAdminView } from "../config/admin-view.ts";
export { resolveConfigPath } from "../config/load-config.ts";
export { daemonClient, failedRequest } from "./daemon-client.ts";
