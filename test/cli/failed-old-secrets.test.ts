/**
 * Dead letters kept with a config secret in their error (kept before errors were redacted when
 * written, or by a bot since removed from the config): `bothost failed list`, `show`, both with
 * `--json`, hide every secret of the config as they read them.
 * The command runs in this process against the state directory (the daemon stopped).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { runFailedCommand } from "../../src/cli/failed.ts";
import { DeadLetterOffice } from "../../src/state/dead-letter-office.ts";
import { FileStore } from "../../src/state/file-store.ts";
import { realClock } from "../../src/time/clock.ts";

const KEY = "mod-secret-key-0123456789";
const PASSWORD = "db-pass-98765-settings";

let dir: string;
let file: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "bothost-failed-old-"));
  file = join(dir, "bothost.yaml");
  await writeFile(
    file,
    `server:\n  url: https://chat.example.org\nstate:\n  path: ${join(dir, "state")}\nbots:\n` +
      `  mod:\n    module: ./mod.ts\n    email: mod-bot@chat.example.org\n    api_key: ${KEY}\n` +
      `    settings:\n      db_password: ${PASSWORD}\n`,
  );
  // Kept as an office with no redaction keeps them: the secrets stored whole.
  const store = await FileStore.open(join(dir, "state"));
  const kept = new DeadLetterOffice(store, new Map([["mod", { max: 10 }]]), realClock);
  const error = new Error(`fetch https://u:${PASSWORD}@db.example.org refused key ${KEY}`);
  await kept.of("mod").add({
    source: "queue",
    event: { type: "message", id: 1, message: { id: 101, content: "hello" } },
    error,
    attempts: 5,
    firstFailedAt: "2026-11-25T10:00:00.000Z",
    lastFailedAt: "2026-11-25T10:01:00.000Z",
  });
  expect(JSON.stringify(await kept.get("mod/1"))).toContain(PASSWORD);
  await store.close();
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** What `bothost failed <argv>` prints on stdout, run in this process; its exit code. */
async function failed(argv: string[]): Promise<{ code: number; printed: string }> {
  const stdout = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
  try {
    const code = await runFailedCommand([...argv, "-c", file]);
    return { code, printed: stdout.mock.calls.map((c) => String(c[0])).join("") };
  } finally {
    stdout.mockRestore();
  }
}

it.each([
  { argv: ["show", "mod/1"] },
  { argv: ["show", "mod/1", "--json"] },
  { argv: ["list"] },
  { argv: ["list", "--json"] },
])("failed $argv hides the config's secrets an old letter's error quotes", async ({ argv }) => {
  const { code, printed } = await failed(argv);
  expect(code).toBe(0);
  expect(printed).toContain("[hidden]");
  expect(printed).not.toContain(KEY);
  expect(printed).not.toContain(PASSWORD);
});
