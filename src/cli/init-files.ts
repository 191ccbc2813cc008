/**
 * What `bothost init` writes: a project that runs on the embedded sandbox as it is, a bot with
 * commands, and the bot's tests (a command, a refused command, a reminder delivered by moving the
 * sandbox clock).
 */
import { readFileSync } from "node:fs";
import { bothostVersion } from "../api/version.ts";

/** bothost's own package.json, or an empty object when it cannot be read. */
function ownManifest(): Record<string, unknown> {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    if (pkg && typeof pkg === "object") return pkg;
  } catch {}
  return {};
}

/** The version range of zod bothost itself depends on: the bot's schemas use it. */
function zodRange(pkg: Record<string, unknown>): string {
  const range = (pkg.dependencies as Record<string, unknown> | undefined)?.zod;
  return typeof range === "string" ? range : "^4.0.0";
}

/**
 * Node's types, as bothost's own are: a bot or test that imports `node:fs` or reads `process`
 * passes `tsc` (the project's `npm run check`); bothost's dependencies do not bring them.
 */
function nodeTypesRange(pkg: Record<string, unknown>): string {
  const range = (pkg.devDependencies as Record<string, unknown> | undefined)?.["@types/node"];
  return typeof range === "string" ? range : "^20.19.0";
}

/**
 * The Node.js versions bothost declares: the project's vitest needs the same (its vite refuses
 * Node 20 before 20.19 and Node 22 before 22.12), so `npm install` warns on neither.
 */
function nodeRange(pkg: Record<string, unknown>): string {
  const range = (pkg.engines as Record<string, unknown> | undefined)?.node;
  return typeof range === "string" ? range : "^20.19.0 || ^22.12.0 || >=24";
}

/**
 * The overrides bothost's own package.json sets: npm applies overrides only in the root project,
 * so a project depending on bothost repeats them to get the same dependency tree.
 */
function overrides(pkg: Record<string, unknown>): Record<string, unknown> | undefined {
  return pkg.overrides && typeof pkg.overrides === "object"
    ? (pkg.overrides as Record<string, unknown>)
    : undefined;
}

/** The files, by path. `bothost` is the package.json's dependency on bothost (see init-source.ts). */
export function initFiles(name: string, bothost = `^${bothostVersion}`): Record<string, string> {
  const own = ownManifest();
  const pinned = overrides(own);
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
        dependencies: { bothost, zod: zodRange(own) },
        devDependencies: { "@types/node": nodeTypesRange(own), typescript: "^5.9.3", vitest: "^4.0.0" },
        ...(pinned ? { overrides: pinned } : {}),
        engines: { node: nodeRange(own) },
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
          // A type imported without `type` is refused by tsc: Node.js 24 (and 22.18 or later),
          // running a file such as a test script as it is, drops no import when it strips types,
          // and stops with "does not provide an export named" on one that names only a type.
          verbatimModuleSyntax: true,
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
 * hello: commands in a direct message or a mention (\`help\` lists them), and a greeting in
 * #general every Monday.
 */
import { defineBot } from "bothost";
import { z } from "zod";

const greeting = "Hello";

export default defineBot({
  setup(bot) {
    bot.command("hello", { description: "say hello" }, (ctx) => ctx.reply(\`\${greeting}, \${ctx.sender.name}!\`));

    // Arguments are checked before the handler runs: "remind soon tea" gets the usage back.
    bot.command(
      "remind",
      {
        description: "remind you in a few minutes",
        args: {
          minutes: z.number().int().min(1).max(1440).describe("in how many minutes"),
          text: z.string().describe("what to remind you of"),
        },
        rest: true,
        examples: ["remind 5 put the kettle on"],
      },
      async (ctx) => {
        // Booked on the server: it is delivered even while the bot is down.
        const at = ctx.now() + ctx.args.minutes * 60_000;
        await ctx.schedule.at({ to: [ctx.sender.id], content: \`Reminder: \${ctx.args.text}\`, at });
        await ctx.reply(\`I will remind you in \${ctx.args.minutes} minutes.\`);
      },
    );

    // Moderators and above only; anyone else is told who may run it.
    bot.command(
      "announce",
      { description: "post in #general", args: { text: z.string() }, rest: true, allow: "moderator" },
      (ctx) => ctx.send({ type: "channel", to: "general", topic: "announcements", content: ctx.args.text }),
    );

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
    "test/hello.test.ts": `import { createBotTest, expect } from "bothost/testing/vitest";
import hello from "../bots/hello.ts";

// Each test gets a fresh sandbox with the people of org.yaml, and a clock to move.
const test = createBotTest({ org: "org.yaml" });
const MEMBER = "member@sandbox.example";
const OWNER = "owner@sandbox.example";

test("answers a command in a direct message", async ({ runBot }) => {
  const bot = await runBot({ bot: hello, name: "hello" });
  const reply = await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "hello" });
  expect(reply.content).toBe("Hello, Mel Member!");
});

test("refuses announce to a member, and posts it for the owner", async ({ runBot }) => {
  const bot = await runBot({ bot: hello, name: "hello" });
  const refused = await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "announce cake!" });
  expect(refused.content).toBe("Sorry, only moderators, administrators and owners may run \`announce\`.");
  // ask() waits in the conversation it asked in; the announcement goes to a channel.
  const asked = bot.post(OWNER, { type: "direct", to: [bot.email], content: "announce cake!" });
  const posted = await bot.nextReply({ after: asked });
  expect(posted).toMatchObject({ display_recipient: "general", subject: "announcements", content: "cake!" });
});

test("delivers a reminder once the sandbox clock passes its time", async ({ runBot, clock }) => {
  const bot = await runBot({ bot: hello, name: "hello" });
  const booked = await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "remind 5 stretch" });
  expect(booked.content).toBe("I will remind you in 5 minutes.");
  await clock.advance(6 * 60_000); // the server sends at the first whole minute past the time
  const reminder = await bot.nextReply({ after: booked.id });
  expect(reminder.content).toBe("Reminder: stretch");
});
`,
    // The state, and what a sandbox that keeps its data writes (as getting-started.md runs it).
    ".gitignore": "node_modules\n.bothost\n.bothost-sandbox\n.sandbox\n.sandbox-data.json\n",
    "README.md": `# ${name}

Chat bots run by bothost. Its guide comes with it, once installed:
[node_modules/bothost/README.md](node_modules/bothost/README.md) and
[docs/guide](node_modules/bothost/docs/guide/getting-started.md).

\`\`\`sh
npm install
npm start        # the bots on the embedded sandbox (see bothost.yaml for a real server)
npm test         # the bots' tests, against the sandbox (test/hello.test.ts)
npx bothost check
\`\`\`

The bots are in \`bots/\`, their tests in \`test/\`, the config in \`bothost.yaml\`, the sandbox's
people and channels in \`org.yaml\`. Say \`help\` to a bot in a direct message for its commands.
`,
  };
}
