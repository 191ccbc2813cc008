/**
 * docs/guide/testing.md's "Without vitest": its script and the command it gives for Node.js lines
 * that do not run TypeScript themselves, run as written in a project that depends on the clone's
 * folder (as `bothost init` run from a clone writes it: npm links node_modules/bothost to the
 * folder, so bothost's own dependencies, jiti among them, are not in the project's node_modules).
 */
import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { assertBuilt, repoRoot } from "../support/cli.ts";

const run = promisify(execFile);
let dir: string;

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(path.join(tmpdir(), "bothost-without-vitest-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The section's TypeScript sample, and the `node --import …` command its prose gives. */
async function section(): Promise<{ script: string; command: string[] }> {
  const doc = await readFile(path.join(repoRoot, "docs/guide/testing.md"), "utf8");
  const text = doc.slice(doc.indexOf("## Without vitest"));
  const script = /```ts\n([\s\S]*?)\n```/.exec(text)?.[1];
  const command = /`(node --import \S+ test\/check\.ts)`/.exec(text.replace(/\n/g, " "))?.[1];
  if (script === undefined || command === undefined)
    throw new Error("the section lost its sample or command");
  return { script, command: command.split(" ") };
}

it("the script runs with the loader the doc names, in a project linked to the clone's folder", async () => {
  const { script, command } = await section();
  const project = path.join(dir, "my-bots");
  const modules = path.join(project, "node_modules");
  await mkdir(path.join(project, "test"), { recursive: true });
  await mkdir(path.join(project, "bots"));
  await mkdir(modules);
  await writeFile(path.join(project, "package.json"), JSON.stringify({ name: "my-bots", type: "module" }));
  await writeFile(
    path.join(project, "org.yaml"),
    "realm: { name: Local, host: sandbox.example }\n" +
      "users:\n  - { email: member@sandbox.example, full_name: Mel Member, role: member }\n" +
      "channels:\n  - { name: general, subscribers: [member@sandbox.example] }\n",
  );
  await copyFile(path.join(repoRoot, "bots/echo.ts"), path.join(project, "bots/echo.ts"));
  await writeFile(path.join(project, "test/check.ts"), script);
  // What npm makes of "bothost": "file:<clone>" and the project's own zod.
  await symlink(repoRoot, path.join(modules, "bothost"), "dir");
  await symlink(path.join(repoRoot, "node_modules/zod"), path.join(modules, "zod"), "dir");

  expect(command.slice(0, 2)).toEqual(["node", "--import"]);
  const done = await run(process.execPath, command.slice(1), {
    cwd: project,
    env: { ...process.env, NO_COLOR: "1" },
  });
  expect(done.stdout).toBe("hi\n");
}, 30_000);
