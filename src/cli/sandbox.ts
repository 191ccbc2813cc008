/**
 * `bothost sandbox` prints each fake account's email and API key: handing out the sandbox's own
 * credentials is the point.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { ExitCode } from "../config/exit-codes.ts";
import { isBothostError } from "../errors/bothost-error.ts";
import { startSandbox } from "../sandbox/start-sandbox.ts";
import type { Sandbox, SandboxUser } from "../sandbox/types.ts";
import { makeDirsSync } from "../state/make-dirs.ts";
import { commandArgs, decimalValue, untilStopped } from "./args.ts";

const HELP = `Usage: bothost sandbox [options]

Run an in-memory chat server that speaks the real HTTP API, for trying bots locally, with a
chat page at /chat/ to post as any person of the organization and see the replies arrive.

Options:
  --port N            Port to listen on (default 9991; 0 picks a free one)
  --host HOST         Interface to bind (default 127.0.0.1)
  --org FILE          Org file (YAML): realm, users, bots, channels… (default: a small demo org)
  --zuliprc-dir DIR   Write <email>.zuliprc for every account into DIR
  --data FILE         Keep the sandbox state in FILE across restarts (JSON)
  --heartbeat N       Heartbeat period of parked event polls, in seconds (default 45-55)
  --help              Show this text

Stops on Ctrl+C (SIGINT) or SIGTERM.
`;

export interface SandboxCommandIo {
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
  /** Stop the sandbox when aborted (tests); SIGINT and SIGTERM always stop it. */
  signal?: AbortSignal;
  /** Called once the sandbox listens (tests). */
  onStarted?: (sandbox: Sandbox) => void;
}

const ROLE_NAMES: Record<number, string> = {
  100: "owner",
  200: "admin",
  300: "moderator",
  400: "member",
  600: "guest",
};

export async function runSandboxCommand(argv: string[], io: SandboxCommandIo = {}): Promise<number> {
  const out = io.stdout ?? process.stdout;
  const err = io.stderr ?? process.stderr;
  const args = commandArgs(
    "sandbox",
    argv,
    HELP,
    {
      port: { type: "string" },
      host: { type: "string" },
      org: { type: "string" },
      "zuliprc-dir": { type: "string" },
      data: { type: "string" },
      heartbeat: { type: "string" },
    },
    false,
    io,
  );
  if (typeof args === "number") return args;
  const { values } = args;
  const port = values.port === undefined ? 9991 : decimalValue(values.port);
  const heartbeat = values.heartbeat === undefined ? undefined : decimalValue(values.heartbeat, true);
  if (port === undefined || port > 65535) {
    err.write(`bothost sandbox: --port must be a whole number from 0 to 65535, got "${values.port}".\n`);
    return ExitCode.ConfigInvalid;
  }
  if (values.heartbeat !== undefined && !(heartbeat !== undefined && heartbeat > 0)) {
    err.write(
      `bothost sandbox: --heartbeat must be a positive number of seconds, got "${values.heartbeat}".\n`,
    );
    return ExitCode.ConfigInvalid;
  }
  let sandbox: Sandbox;
  try {
    sandbox = await startSandbox({
      port,
      host: values.host,
      org: values.org,
      dataFile: values.data,
      heartbeatSeconds: heartbeat,
      chatPage: true,
    });
  } catch (e) {
    err.write(`bothost sandbox: ${isBothostError(e) ? e.message : String(e)}\n`);
    // An option's file (the org, the data) is a mistake to fix (2); an address not to be had is not.
    return isBothostError(e) && e.code !== "SANDBOX_LISTEN_FAILED"
      ? ExitCode.ConfigInvalid
      : ExitCode.RuntimeFailure;
  }
  const users = sandbox.control.users().filter((u) => u.is_active);
  const dir = values["zuliprc-dir"];
  if (dir !== undefined) {
    try {
      writeZuliprcs(dir, sandbox.url, users);
    } catch (e) {
      await sandbox.stop();
      const { code, message } = e as NodeJS.ErrnoException;
      err.write(
        `bothost sandbox: cannot write the zuliprc files to ${dir}: ${code ?? message}. Name a folder it can create or write (--zuliprc-dir).\n`,
      );
      return ExitCode.ConfigInvalid;
    }
  }
  out.write(describe(sandbox.url, users));
  if (dir !== undefined) out.write(`zuliprc files: ${path.resolve(dir)}/<email>.zuliprc\n`);
  out.write("Press Ctrl+C to stop.\n");
  io.onStarted?.(sandbox);
  await untilStopped(io.signal);
  await sandbox.stop();
  out.write("Sandbox stopped.\n");
  return ExitCode.Ok;
}

function describe(url: string, users: SandboxUser[]): string {
  const width = Math.max(...users.map((u) => u.email.length));
  const rows = users.map((u) => {
    const kind = u.is_bot ? "bot" : (ROLE_NAMES[u.role] ?? String(u.role));
    return `  ${u.email.padEnd(width)}  ${u.api_key}  ${kind.padEnd(9)}  ${u.full_name}`;
  });
  return `Sandbox listening on ${url} (API under ${url}/api/v1)\nChat page: ${url}/chat/\nAccounts (sandbox-only credentials):\n${rows.join("\n")}\n`;
}

function writeZuliprcs(dir: string, url: string, users: SandboxUser[]): void {
  makeDirsSync(dir);
  for (const u of users) {
    // As the server's own zuliprc download: an outgoing-webhook bot's also carries its token,
    // which bothost's `outgoing_webhook.token` must match.
    const token = u.outgoing_token === undefined ? "" : `token=${u.outgoing_token}\n`;
    const text = `[api]\nemail=${u.email}\nkey=${u.api_key}\nsite=${url}\n${token}`;
    writeFileSync(path.join(dir, `${u.email}.zuliprc`), text, { mode: 0o600 });
  }
}
