// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the configs below use ${VAR}.
/**
 * What the admin commands read from a config file that may be partly broken: `state:` and
 * `http:` only, with only their own variables looked up; and the problems a full load finds,
 * apart from variables not set in this shell.
 */
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runtimeDir } from "../../src/config/admin-socket-path.ts";
import { configProblemsOnDisk, readAdminView } from "../../src/config/admin-view.ts";
import { isConfigError } from "../../src/config/config-error.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "bothost-view-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function write(name: string, text: string): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, text);
  return file;
}

/** An environment that records every name looked up in it. */
function recordingEnv(values: Record<string, string>) {
  const read: string[] = [];
  const env = new Proxy(values, {
    get(target, name) {
      if (typeof name === "string") read.push(name);
      return target[name as string];
    },
  });
  return { env, read };
}

const BOTS =
  "bots:\n  greeter:\n    module: ./greeter.ts\n    email: greeter-bot@chat.example.org\n    api_key: ${GREETER_BOT_API_KEY}\n";

describe("readAdminView", () => {
  it("reads state: and http: past a syntax error in the bots, looking up only their variables", async () => {
    const file = await write(
      "broken.yaml",
      "server:\n  url: https://chat.example.org\nstate:\n  path: ${STATE_DIR}/bots\nhttp:\n  listen: 127.0.0.1:${PORT}\n" +
        `${BOTS}    events: [message\n`,
    );
    const { env, read } = recordingEnv({
      STATE_DIR: "/srv/bothost",
      PORT: "8080",
      GREETER_BOT_API_KEY: "x-secret-key-123",
    });
    const view = await readAdminView(file, { env, cwd: dir });
    expect(view).toMatchObject({
      file,
      state: { path: "/srv/bothost/bots" },
      http: { listen: "127.0.0.1:8080" },
      socket: "/srv/bothost/bots/admin.sock",
      problems: [],
    });
    expect([...new Set(read)].sort()).toEqual(["PORT", "STATE_DIR"]);
  });

  it("defaults state to ./.bothost beside the file, with the key variable unset", async () => {
    const file = await write("minimal.yaml", `server:\n  url: https://chat.example.org\n${BOTS}`);
    const view = await readAdminView(file, { env: {}, cwd: dir });
    expect(view.state).toEqual({ path: path.join(dir, ".bothost") });
    expect(view.http).toBeUndefined();
  });

  it("refuses a state: it cannot use, located at file:line:column", async () => {
    const file = await write(
      "bad-state.yaml",
      `state:\n  path: ./s\n  redis: redis://localhost:6379\n${BOTS}`,
    );
    const err = await readAdminView(file, { env: {}, cwd: dir }).catch((e: unknown) => e);
    expect(isConfigError(err)).toBe(true);
    expect((err as Error).message).toMatch(
      /^bad-state\.yaml has 1 problem:\nbad-state\.yaml:3:10 state\.redis: cannot be used together with state\.path/,
    );

    const unset = await write("unset-state.yaml", `state:\n  path: \${STATE_DIR}\n${BOTS}`);
    const err2 = await readAdminView(unset, { env: {}, cwd: dir }).catch((e: unknown) => e);
    expect((err2 as { format(): string }).format()).toMatch(
      /^unset-state\.yaml:2:9 state\.path: environment variable STATE_DIR is not set/,
    );
  });

  it("leaves out an invalid http: with its problem, never showing the token", async () => {
    const file = await write(
      "bad-http.yaml",
      `http:\n  listen: 127.0.0.1:8080\n  admin_token: short-tok\n${BOTS}`,
    );
    const view = await readAdminView(file, { env: {}, cwd: dir });
    expect(view.http).toBeUndefined();
    expect(view.problems).toMatchObject([{ line: 3, column: 16, path: "http.admin_token" }]);
    expect(JSON.stringify(view.problems)).not.toContain("short-tok");
  });

  it("puts the socket of a Redis state in the per-user folder, the same through a symlink", async () => {
    const file = await write("redis.yaml", `state:\n  redis: redis://localhost:6379/0\n${BOTS}`);
    const link = path.join(dir, "link.yaml");
    await symlink(file, link);
    const view = await readAdminView(file, { env: {}, cwd: dir });
    expect(path.dirname(view.socket)).toBe(runtimeDir());
    expect((await readAdminView(link, { env: {}, cwd: dir })).socket).toBe(view.socket);
  });
});

describe("configProblemsOnDisk", () => {
  it("separates variables unset in this shell from the file's problems", async () => {
    const file = await write(
      "typo.yaml",
      `server:\n  url: https://chat.example.org\n${BOTS}    concurency: 4\n`,
    );
    expect(await configProblemsOnDisk(file, { env: {}, cwd: dir })).toEqual({
      problems: [
        {
          file: "typo.yaml",
          line: 8,
          column: 5,
          path: "bots.greeter.concurency",
          message: expect.stringContaining('did you mean "concurrency"?'),
        },
      ],
      unsetVariables: ["GREETER_BOT_API_KEY"],
    });
    const fine = await write("fine.yaml", `server:\n  url: https://chat.example.org\n${BOTS}`);
    expect(
      await configProblemsOnDisk(fine, { env: { GREETER_BOT_API_KEY: "k".repeat(32) }, cwd: dir }),
    ).toEqual({
      problems: [],
      unsetVariables: [],
    });
  });
});
