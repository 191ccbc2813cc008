/**
 * Every code sample in README.md and docs/ is checked: TypeScript samples are type-checked
 * against the package (a fragment without imports is checked with `ctx`, `bot`, `client` and
 * `sandbox` declared), YAML samples that are whole configs go through the config loader (the
 * others must parse), and each `bothost …` command of a shell sample must exist in the built CLI,
 * as must each action of a command that takes one (`bothost failed drop`), in prose as well.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { dialogsHelp } from "../../src/cli/dialogs.ts";
import { failedHelp } from "../../src/cli/failed.ts";
import { scheduleHelp } from "../../src/cli/schedule.ts";
import { loadConfig } from "../../src/config/load-config.ts";
import { assertBuilt, cliPath, repoRoot } from "../support/cli.ts";

interface Sample {
  file: string;
  line: number;
  lang: string;
  code: string;
}

async function docFiles(): Promise<string[]> {
  const docs = (await readdir(path.join(repoRoot, "docs"), { recursive: true }))
    .map(String)
    .filter((f) => f.endsWith(".md"))
    .map((f) => path.join("docs", f));
  return ["README.md", ...docs.sort()];
}

async function samples(): Promise<Sample[]> {
  const out: Sample[] = [];
  for (const file of await docFiles()) {
    const lines = (await readFile(path.join(repoRoot, file), "utf8")).split("\n");
    for (let i = 0; i < lines.length; i++) {
      const open = /^(\s*)```(\w+)/.exec(lines[i]!);
      if (!open) continue;
      const indent = open[1]!.length;
      const start = i;
      const code: string[] = [];
      while (++i < lines.length && !/^\s*```\s*$/.test(lines[i]!)) code.push(lines[i]!.slice(indent));
      out.push({ file, line: start + 1, lang: open[2]!, code: code.join("\n") });
    }
  }
  return out;
}

const all = await samples();
const where = (s: Sample) => `${s.file}:${s.line}`;

/**
 * What a fragment may use without importing it: a message handler's context, the bot in setup,
 * a client, a sandbox, and the placeholders the docs use for the reader's own code and values.
 */
const PRELUDE = `
import type { BotApi, BotContext, Client, EventMap } from "bothost";
import type { Sandbox } from "bothost/testing";
declare const ctx: BotContext<any> & { event: EventMap["message"] };
declare const bot: BotApi<any>;
declare const client: Client;
declare const sandbox: Sandbox;
declare const settings: any;
declare const signal: AbortSignal;
declare const senderId: number;
declare const deviceToken: string;
declare function buildDigest(api: Client): Promise<string>;
declare function slowLookup(query: string, signal: AbortSignal): Promise<string>;
declare const q: string;
`;

describe("TypeScript samples", () => {
  const ts_ = all.filter((s) => s.lang === "ts" || s.lang === "typescript");

  it("there are some", () => expect(ts_.length).toBeGreaterThan(10));

  it("type-check against the package", () => {
    const files = new Map<string, Sample>();
    for (const [n, s] of ts_.entries()) {
      files.set(path.join(repoRoot, "docs", `__sample_${n}.ts`), s);
    }
    const text = (s: Sample) =>
      /^\s*(import|export)\s/m.test(s.code) ? s.code : `${PRELUDE}\nexport {};\n${s.code}\n`;
    const config = ts.getParsedCommandLineOfConfigFile(
      path.join(repoRoot, "tsconfig.json"),
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (d) => {
          throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
        },
      },
    )!;
    const host = ts.createCompilerHost(config.options);
    const read = host.readFile.bind(host);
    const exists = host.fileExists.bind(host);
    host.readFile = (f) => (files.has(f) ? text(files.get(f)!) : read(f));
    host.fileExists = (f) => files.has(f) || exists(f);
    const program = ts.createProgram([...files.keys()], { ...config.options, noUnusedLocals: false }, host);
    // The samples' own diagnostics, file by file: the same ones a check of the whole program
    // reports for them, without checking every file of src/ the samples import (12 s of one core instead of 50 s).
    const diagnostics = [...files.keys()].flatMap((f) =>
      ts.getPreEmitDiagnostics(program, program.getSourceFile(f)),
    );
    const problems = diagnostics.flatMap((d) => {
      const sample = d.file && files.get(d.file.fileName);
      if (!sample) return [];
      const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0);
      const offset = /^\s*(import|export)\s/m.test(sample.code) ? 0 : PRELUDE.split("\n").length + 2;
      return [
        `${sample.file}:${sample.line + 1 + line - offset}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`,
      ];
    });
    expect(problems).toEqual([]);
    // A TypeScript program over every sample: seconds of one core, more beside other files.
  }, 90_000);
});

describe("YAML samples", () => {
  const yaml = all.filter((s) => s.lang === "yaml" || s.lang === "yml");
  const dir = mkdtemp(path.join(tmpdir(), "bothost-doc-yaml-"));
  afterAll(async () => rm(await dir, { recursive: true, force: true }));

  it("there are some", () => expect(yaml.length).toBeGreaterThan(5));

  it.each(yaml.map((s) => [where(s), s] as const))("%s parses, and a whole config loads", async (_at, s) => {
    const doc = parse(s.code) as unknown;
    expect(doc).toBeTypeOf("object");
    if (!doc || typeof doc !== "object" || !("bots" in doc) || !("server" in doc)) return;
    const file = path.join(await dir, `${path.basename(s.file, ".md")}-${s.line}.yaml`);
    await writeFile(file, s.code);
    const env = Object.fromEntries(
      [...s.code.matchAll(/\$\{(\w+)\}/g)].map(([, name]) => [name!, "sample-value-0123456789"]),
    );
    await expect(loadConfig(file, { env })).resolves.toBeTypeOf("object");
  });
});

describe("shell samples", () => {
  const commands = all
    .filter((s) => s.lang === "sh" || s.lang === "bash" || s.lang === "console")
    .flatMap((s) =>
      s.code
        .split("\n")
        .map((l) => /(?:^|\s)(?:npx )?bothost ([a-z-]+)/.exec(l.replace(/^\$ /, ""))?.[1])
        .filter((c): c is string => c !== undefined)
        .map((c) => [where(s), c] as const),
    );

  it("there are some", () => expect(commands.length).toBeGreaterThan(3));

  it.each(commands)("%s: bothost %s exists", async (_at, command) => {
    assertBuilt();
    const { stdout } = await promisify(execFile)(process.execPath, [cliPath, command, "--help"]);
    expect(stdout).toMatch(/Usage: bothost/);
  });
});

describe("actions named anywhere in the docs", () => {
  /** The actions each command's usage line lists (`Usage: bothost failed <list|show|retry|drop>`). */
  const actions = new Map(
    [failedHelp, dialogsHelp, scheduleHelp].map((help) => {
      const [, command, list] = /^Usage: bothost ([a-z]+) [<[]?([a-z|]+)/.exec(help)!;
      return [command!, list!.split("|")] as const;
    }),
  );

  it("each is one its command has", async () => {
    const unknown: string[] = [];
    for (const file of await docFiles()) {
      const text = await readFile(path.join(repoRoot, file), "utf8");
      for (const m of text.matchAll(/\bbothost (failed|dialogs|schedule) ([a-z]+)\b/g)) {
        if (!actions.get(m[1]!)!.includes(m[2]!)) unknown.push(`${file}: bothost ${m[1]} ${m[2]}`);
      }
    }
    expect(unknown).toEqual([]);
  });
});

describe("links", () => {
  /** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
  const slug = (heading: string) =>
    heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .trim()
      .replace(/\s/g, "-");

  it("every relative link names a file that exists, and a heading there when it has an anchor", async () => {
    const broken: string[] = [];
    for (const file of await docFiles()) {
      const text = await readFile(path.join(repoRoot, file), "utf8");
      const outside = text.replace(/```[\s\S]*?```/g, "");
      for (const [, target] of outside.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [rel, anchor] = target!.split("#");
        const linked = rel ? path.join(path.dirname(file), rel) : file;
        const full = path.join(repoRoot, linked);
        const found = await stat(full).catch(() => undefined);
        if (!found) {
          broken.push(`${file}: ${target} (no such file)`);
          continue;
        }
        if (found.isDirectory()) continue;
        const body = await readFile(full, "utf8");
        if (
          anchor &&
          !body.split("\n").some((l) => /^#+ /.test(l) && slug(l.replace(/^#+ /, "")) === anchor)
        ) {
          broken.push(`${file}: ${target} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
