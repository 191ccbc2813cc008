/**
 * A daemon that holds the state directory but answers on no channel (its admin socket removed,
 * no http:): `failed` and `dialogs` exit 1 with DAEMON_UNREACHABLE, naming each channel tried once.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { runDialogsCommand } from "../../src/cli/dialogs.ts";
import { runFailedCommand } from "../../src/cli/failed.ts";
import { FileStore } from "../../src/state/file-store.ts";

let dir: string;
let file: string;
let held: FileStore;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "bothost-held-silent-"));
  const state = join(dir, "state");
  // The state directory held, as by a daemon whose admin socket is gone.
  held = await FileStore.open(state);
  file = join(dir, "bothost.yaml");
  await writeFile(
    file,
    `server:\n  url: https://chat.example.org\nstate:\n  path: ${state}\nbots:\n` +
      "  mod:\n    module: ./mod.ts\n    email: mod-bot@chat.example.org\n    api_key: mod-key-0123456789\n",
  );
  await writeFile(join(dir, "mod.ts"), "export default { setup() {} };\n");
});
afterAll(async () => {
  await held?.close();
  await rm(dir, { recursive: true, force: true });
});

it.each([
  ["failed list", "failed", () => runFailedCommand(["list", "-c", file])],
  ["dialogs", "dialogs", () => runDialogsCommand(["-c", file])],
])("%s says the admin socket it tried once, and exits 1", async (_, command, run) => {
  const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  const code = await run();
  const printed = stderr.mock.calls.join("");
  stderr.mockRestore();
  expect(code).toBe(1);
  expect(printed).toMatch(
    new RegExp(
      `^bothost ${command}: no daemon answers: the admin socket \\S+admin\\.sock: no such socket\\. `,
    ),
  );
  expect(printed.match(/no such socket/g)).toHaveLength(1);
});
