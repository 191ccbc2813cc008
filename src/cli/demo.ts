import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient } from "../api/create-client.ts";
import { ExitCode } from "../config/exit-codes.ts";
import { type Booted, bootDaemon } from "../daemon/boot.ts";
import { scene } from "../demo/scene.ts";
import { formatMessage, type MessageRecordView, namesFrom } from "../demo/transcript.ts";
import { commandArgs, reportStartupError, untilStopped } from "./args.ts";

export const demoHelp = `Usage: bothost demo [--follow] [--verbose]

Starts the embedded sandbox with the shipped org (bots/demo/org.yaml), runs the daemon with the
shipped config (bots/demo/bothost.yaml), plays a short scene and prints what each bot did.

Options:
  --follow    Keep running after the scene and print new messages until Ctrl-C
  --verbose   Show the daemon's log lines too
  -h, --help  Show this text

`;

const STEP_TIMEOUT_MS = 15_000;
const out = (line = "") => process.stdout.write(`${line}\n`);

export async function runDemoCommand(argv: string[]): Promise<number> {
  const args = commandArgs("demo", argv, demoHelp, {
    follow: { type: "boolean" },
    verbose: { type: "boolean" },
  });
  if (typeof args === "number") return args;
  const { values } = args;
  const configPath = fileURLToPath(new URL("../../bots/demo/bothost.yaml", import.meta.url));
  const stateDir = await mkdtemp(join(tmpdir(), "bothost-demo-"));
  let booted: Booted | undefined;
  try {
    booted = await bootDaemon(configPath, {
      statePath: stateDir,
      logLevel: values.verbose ? "info" : "error",
      sandbox: { heartbeatSeconds: 5 },
      clockFromSandbox: true,
    });
    const sandbox = booted.sandbox!;
    const report = await booted.daemon.start();
    const control = sandbox.control;
    const owner = control.users().find((u) => u.role === 100)!;
    const asOwner = createClient({ url: sandbox.url, email: owner.email, apiKey: owner.api_key });
    const { streams } = await asOwner.channels.list({ include_all: true });
    const extraNames = new Map<number, string>();
    const names = namesFrom(control, new Map(streams.map((s) => [s.stream_id, s.name])), extraNames);
    const learnNames = async (messages: MessageRecordView[]) => {
      for (const m of messages) {
        if (names.user(m.sender_id).startsWith("user ")) {
          const { user } = await asOwner.users.get(m.sender_id).catch(() => ({ user: undefined }));
          if (user) extraNames.set(m.sender_id, user.full_name);
        }
      }
    };
    const ids = {
      user: (email: string) => control.users().find((u) => u.email === email)?.user_id ?? -1,
      channel: (name: string) => streams.find((s) => s.name === name)?.stream_id ?? -1,
    };
    const records = () => control.messages() as unknown as MessageRecordView[];

    out(`bothost demo: ${report.started.length} bots running against the embedded sandbox at ${sandbox.url}`);
    out(`bots: ${report.started.join(", ")}`);
    let failed = 0;
    for (const [i, step] of scene.entries()) {
      out();
      out(`[${i + 1}] ${step.title}`);
      const before = Math.max(0, ...records().map((m) => m.id));
      const note = await step.act(control);
      if (note) out(`    ${note}`);
      const since = () => records().filter((m) => m.id > before);
      try {
        await control.waitFor(() => step.done(since(), ids), { timeoutMs: STEP_TIMEOUT_MS });
        await settle(() => since().length);
      } catch {
        failed++;
        out(`    ✗ expected: ${step.expected} (nothing within ${STEP_TIMEOUT_MS / 1000} s)`);
      }
      await learnNames(since());
      for (const m of since()) out(formatMessage(m, names));
    }
    out();
    out(
      failed === 0
        ? `Scene complete: all ${scene.length} steps happened.`
        : `${failed} step(s) did not happen.`,
    );
    if (values.follow && failed === 0) await follow(records, names);
    return failed === 0 ? ExitCode.Ok : ExitCode.RuntimeFailure;
  } catch (err) {
    return reportStartupError(err, "demo");
  } finally {
    await booted?.stop().catch(() => {});
    await rm(stateDir, { recursive: true, force: true });
  }
}

/** Wait until `count()` has not changed for a short while (the bots finished answering). */
async function settle(count: () => number, quietMs = 300): Promise<void> {
  let last = count();
  for (;;) {
    await new Promise((r) => setTimeout(r, quietMs));
    const now = count();
    if (now === last) return;
    last = now;
  }
}

async function follow(
  records: () => MessageRecordView[],
  names: ReturnType<typeof namesFrom>,
): Promise<void> {
  out("Following new messages; press Ctrl-C to stop.");
  let seen = Math.max(0, ...records().map((m) => m.id));
  const stop = untilStopped();
  const timer = setInterval(() => {
    for (const m of records().filter((r) => r.id > seen)) {
      out(formatMessage(m, names));
      seen = Math.max(seen, m.id);
    }
  }, 250);
  await stop;
  clearInterval(timer);
}
