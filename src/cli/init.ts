import { mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { bothostVersion } from "../api/version.ts";
import { ExitCode } from "../config/exit-codes.ts";
import { commandArgs } from "./args.ts";

export const initHelp = `Usage: bothost init [DIR] [--force]

Creates a bothost project in DIR (default: the current folder): package.json, tsconfig.json,
bothost.yaml (the embedded sandbox, with org.yaml), bots/hello.ts, test/hello.test.ts,
.gitignore and README.md. Then: npm install, npm run dev (the bots and a chat page to talk to
them), npm start, npm test.

Options:
      --force   Write into a folder that is not empty (existing files are replaced)
  -h, --help    Show this text
`;

export async function runInitCommand(argv: string[]): Promise<number> {
  const args = commandArgs("init", argv, initHelp, { force: { type: "boolean" } }, true);
  if (typeof args === "number") return args;
  const { values, positionals } = args;
  if (positionals.length > 1) {
    process.stderr.write(
      `bothost init: give one folder, not ${positionals.length}. Run "bothost init --help".\n`,
    );
    return ExitCode.ConfigInvalid;
  }
  const dir = path.resolve(positionals[0] ?? ".");
  const present = await readdir(dir).catch(() => [] as string[]);
  if (present.length > 0 && !values.force) {
    process.stderr.write(
      `bothost init: ${dir} is not empty (${present.slice(0, 3).join(", ")}${present.length > 3 ? ", …" : ""}). ` +
        "Choose an empty folder, or add --force to write into it.\n",
    );
    return ExitCode.ConfigInvalid;
  }
  const name =
    path
      .basename(dir)
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, "-") || "bots";
  for (const [file, text] of Object.entries(initFiles(name))) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
  const where = positionals[0] ? `cd ${positionals[0]} && ` : "";
  process.stdout.write(
    `Created a bothost project in ${dir}.\n` +
      `Next: ${where}npm install && npm run dev   (a chat page to talk to the bots; npm start runs them, npm test tests them)\n`,
  );
  return ExitCode.Ok;
}

/** The files `bothost init` writes: a project that runs on the embedded sandbox as it is. */
function initFiles(name: string): Record<string, string> {
  return {
    "package.json": `${JSON.stringify(
      {
        name,
        private: true,
        type: "module",
        scripts: {
          start: "bothost run",
          dev: "bothost dev --config bothost.yaml",
          test: "vitest run",
          check: "bothost check && tsc --noEmit && vitest run",
        },
        dependencies: { bothost: `^${bothostVersion}` },
        devDependencies: { typescript: "^5.9.3", vitest: "^4.0.0" },
        engines: { node: ">=20.18.1" },
      },
      null,
      2,
    )}\n`,
    "tsconfig.json": `${JSON.stringify(
      {
        compilerOptions: {
          target: "ES2023",
          module: "nodenext",
          moduleResolution: "nodenext",
          strict: true,
          noEmit: true,
          allowImportingTsExtensions: true,
          skipLibCheck: true,
        },
        include: ["bots", "test"],
      },
      null,
      2,
    )}\n`,
    "bothost.yaml": `# bothost's config: every key is described in bothost's config.example.yaml.
#
# As written, the bots run on bothost's embedded sandbox: an in-memory chat server started in
# the same process, with the organization in org.yaml. For a real server, set the URL and give
# each bot its email and API key (from the environment, never in this file):
#
#   server:
#     url: https://chat.example.org
#   bots:
#     hello:
#       module: ./bots/hello.ts
#       email: hello-bot@chat.example.org
#       api_key: \${HELLO_BOT_API_KEY}
server:
  url: sandbox
  sandbox:
    org: ./org.yaml

state:
  path: ./.bothost

bots:
  hello:
    module: ./bots/hello.ts
    email: hello-bot@sandbox.example
`,
    "org.yaml": `# The sandbox's organization: who is there to talk to the bots.
realm: { name: Local, host: sandbox.example }
users:
  - { email: owner@sandbox.example, full_name: Olive Owner, role: owner }
  - { email: member@sandbox.example, full_name: Mel Member, role: member }
bots:
  - { email: hello-bot@sandbox.example, full_name: Hello Bot, type: generic, owner: owner@sandbox.example }
channels:
  - name: general
    subscribers: [owner@sandbox.example, member@sandbox.example, hello-bot@sandbox.example]
`,
    "bots/hello.ts": `/**
 * hello: answers "hello" in a direct message or a mention, and greets #general every Monday.
 */
import { defineBot } from "bothost";

const greeting = "Hello";

export default defineBot({
  setup(bot) {
    // A command: a direct message or a mention that says "hello".
    bot.on("message", { contains: /\\bhello\\b/i }, async (ctx) => {
      const m = ctx.event.message;
      if (m.type === "stream" && !ctx.event.flags.includes("mentioned")) return;
      await ctx.reply(\`\${greeting}, \${m.sender_full_name}!\`);
    });

    // A schedule: booked on the server, delivered even while the bot is down.
    bot.recurring("monday-hello", {
      cron: "0 9 * * MON",
      timezone: "UTC",
      to: "general",
      topic: "hello",
      content: \`\${greeting}, everyone: a new week!\`,
    });
  },
});
`,
    "test/hello.test.ts": `import { expect, test } from "bothost/testing/vitest";
import hello from "../bots/hello.ts";

test("answers hello in a direct message", async ({ runBot }) => {
  const bot = await runBot({ bot: hello, name: "hello" });
  const reply = await bot.ask("member@sandbox.example", { type: "direct", to: [bot.email], content: "hello" });
  expect(reply.content).toBe("Hello, Mel Member!");
});
`,
    ".gitignore": "node_modules\n.bothost\n",
    "README.md": `# ${name}

Chat bots run by [bothost](https://www.npmjs.com/package/bothost).

\`\`\`sh
npm install
npm start        # the bots on the embedded sandbox (see bothost.yaml for a real server)
npm test         # the bots' tests, against the sandbox
npx bothost check
\`\`\`

The bots are in \`bots/\`, their tests in \`test/\`, the config in \`bothost.yaml\`.
`,
  };
}
