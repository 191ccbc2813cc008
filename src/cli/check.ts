import { createClient } from "../api/create-client.ts";
import { isAuthError } from "../api/errors.ts";
import { type LoadedBot, loadBots, loadConfigForBots } from "../bot/load-bots.ts";
import { type NamedEntry, namedIn } from "../bot/named-settings.ts";
import { formatProblems } from "../config/config-problem.ts";
import type { ConfigSource } from "../config/config-source.ts";
import { ExitCode } from "../config/exit-codes.ts";
import { resolveConfigPath } from "../config/load-config.ts";
import type { BotConfig } from "../config/schema.ts";
import { configSecrets, redact } from "../config/secrets.ts";
import { mapLimited } from "../daemon/map-limited.ts";
import { noAccountProblem, outgoingAccountProblem } from "../daemon/sandbox-accounts.ts";
import {
  runSetupOffline,
  type SetupProblem,
  setupProblem,
  undeclaredWebhook,
} from "../daemon/trial-setup.ts";
import { unseenNames, unseenProblem } from "../daemon/unseen-names.ts";
import { startSandbox } from "../sandbox/start-sandbox.ts";
import type { Sandbox } from "../sandbox/types.ts";
import { type FeatureName, featureLevels } from "../wire/feature-levels.ts";
import { commandArgs, configOption, reportStartupError, table } from "./args.ts";

export const checkHelp = `Usage: bothost check [--config FILE]

Validates the config and every bot module, and runs each bot's setup offline (as "bothost run"
does at start: a bad cron expression, filter or command argument fails here), then asks each bot's
server who the bot is (GET /users/me) and what the server is (GET /server_settings), and whether
each channel and user group its settings name (channelSetting(), groupSetting()) is one it can
see (GET /streams, GET /user_groups). It prints a table: bot, user id, email, is_bot, server version, feature level, and the bothost features the
server is too old for. Nothing changes on the server and the state directory is not opened, so
it is safe to run next to a running daemon. With url: sandbox, the embedded sandbox is started.

Options:
  -c, --config FILE   The config file (default: $BOTHOST_CONFIG, else ./bothost.yaml)
  -h, --help          Show this text

Exit codes: 0 every bot is ready; 1 some bot is not, or a module's own code throws in setup
(each is named, with the reason); 2 the config, a module, a declaration a bot's setup makes or an
option is invalid, or the embedded sandbox has no account for a bot's email; 3 the server rejected every bot's credentials.
`;

export async function runCheckCommand(argv: string[]): Promise<number> {
  const args = commandArgs("check", argv, checkHelp, configOption);
  if (typeof args === "number") return args;
  const { values } = args;
  let sandbox: Sandbox | undefined;
  try {
    const { config, source } = await loadConfigForBots(resolveConfigPath({ flag: values.config }));
    const loaded = await loadBots(config, source);
    const { problems, withCommands, webhooks } = await setupProblems(loaded);
    const named = new Map(
      loaded.map((b) => [b.name, namedIn(b.definition.settings, b.settings, ["bots", b.name, "settings"])]),
    );
    // A setup's error may quote a secret of the config (a password from its settings in a URL).
    const secrets = configSecrets(config);
    if (problems.length > 0) {
      for (const line of problems.flatMap((p) => p.line.split("\n")))
        process.stderr.write(`bothost check: ${redact(line, secrets)}\n`);
      return problems.some((p) => p.declaration) ? ExitCode.ConfigInvalid : ExitCode.RuntimeFailure;
    }
    if (Object.values(config.bots).some((b) => b.server.url === "sandbox")) {
      const s = config.server?.sandbox;
      sandbox = await startSandbox({ ...(s?.org ? { org: s.org } : {}), port: s?.port ?? 0 });
    }
    // registration_concurrency bots at a time, in config order.
    const checks = await mapLimited(
      Object.entries(config.bots),
      config.registration_concurrency,
      async ([name, bot]) => ({
        ...(await checkOne(name, bot, sandbox, source, named.get(name) ?? [])),
        commands: withCommands.has(name),
        ...(!config.http && webhooks.has(name) && { unreachableWebhooks: webhooks.get(name) }),
      }),
    );
    process.stdout.write(formatChecks(checks));
    const failing = checks.filter((c) => c.problem !== undefined);
    for (const c of failing)
      for (const line of c.problem!.split("\n")) process.stderr.write(`bothost check: ${c.name}: ${line}\n`);
    if (failing.length === 0) return ExitCode.Ok;
    // As `run` refuses it before anything starts: a mistake in the config, whatever else fails.
    if (failing.some((c) => c.noAccount)) return ExitCode.ConfigInvalid;
    return failing.length === checks.length && failing.every((c) => c.authFailed)
      ? ExitCode.AuthFailed
      : ExitCode.RuntimeFailure;
  } catch (err) {
    return reportStartupError(err, "check");
  } finally {
    await sandbox?.stop();
  }
}

/**
 * Each bot's setup run offline, as `run` runs it at start: what fails there, in config order, and
 * the bots that declare commands.
 */
async function setupProblems(
  bots: readonly LoadedBot[],
): Promise<{ problems: SetupProblem[]; withCommands: Set<string>; webhooks: Map<string, string[]> }> {
  const problems: SetupProblem[] = [];
  const withCommands = new Set<string>();
  const webhooks = new Map<string, string[]>();
  for (const b of bots) {
    const { module, command_prefix: commandPrefix } = b.config;
    const trial = await runSetupOffline({ ...b, module, commandPrefix });
    if (trial.problem) problems.push(trial.problem);
    const undeclared = trial.handle && undeclaredWebhook(b.name, b.webhookPlaces, trial.handle.webhooks);
    if (undeclared) problems.push(setupProblem({ name: b.name, module }, undeclared));
    if ((trial.handle?.commands?.describe().length ?? 0) > 0) withCommands.add(b.name);
    const declared = [...(trial.handle?.webhooks.keys() ?? [])];
    if (declared.length > 0) webhooks.set(b.name, declared);
  }
  return { problems, withCommands, webhooks };
}

/**
 * Who the server says the bot is (GET /users/me) and what the server is (GET /server_settings), with
 * the reason in words when either fails; then, for a bot the server knows, whether each of
 * `named` (its channel, group and user settings) names one it can see (GET /streams, GET /user_groups, GET /users).
 * Nothing changes on the server.
 */
async function checkOne(
  name: string,
  bot: BotConfig,
  sandbox: Sandbox | undefined,
  source: ConfigSource,
  named: readonly NamedEntry[],
): Promise<BotCheck> {
  const { email } = bot;
  const url = bot.server.url === "sandbox" ? sandbox!.url : bot.server.url;
  const result: BotCheck = { name, email, url, authFailed: false };
  let apiKey = bot.api_key;
  let noAccount: string | undefined;
  if (bot.server.url === "sandbox" && apiKey === "") {
    // As `run` does: on the embedded sandbox a bot without a key signs in with its account's key.
    const account = sandbox!.control.users().find((u) => u.email === email);
    if (account) apiKey = account.api_key;
    // Located at the bot's email, as `run` refuses it.
    else noAccount = formatProblems([noAccountProblem(source, name, email)]);
  }
  let client: ReturnType<typeof createClient>;
  try {
    // Without an account there is no key to give; none is sent anyway: only GET /server_settings,
    // which takes no credentials, is called then.
    client = createClient({ url, email, apiKey: noAccount ? "none" : apiKey, ...CALL });
  } catch (err) {
    return { ...result, problem: describe(err) };
  }
  if (noAccount) {
    const settings = await client.server.settings().catch(() => undefined);
    return {
      ...result,
      version: settings?.zulip_version,
      featureLevel: settings?.zulip_feature_level,
      noAccount: true,
      problem: noAccount,
    };
  }
  const [settings, me] = await Promise.allSettled([client.server.settings(), client.users.me()]);
  if (settings.status === "fulfilled") {
    result.version = settings.value.zulip_version;
    result.featureLevel = settings.value.zulip_feature_level;
  }
  if (me.status === "fulfilled") {
    result.userId = me.value.user_id;
    result.isBot = me.value.is_bot;
  } else if (isAuthError(me.reason)) {
    const err = me.reason;
    result.authFailed = true;
    const said = `(${err.status} ${err.code}: ${err.msg})`;
    result.problem =
      bot.server.url === "sandbox"
        ? // A key given on the embedded sandbox is not its account's: no zuliprc to download there.
          `the embedded sandbox refused the API key bots.${name} gives for ${email} ${said}. ` +
          `Remove it (the bot then signs in with its account's key), or give the account that key ` +
          `in the org file (server.sandbox.org: api_key).`
        : `the server at ${client.origin} rejected the credentials of ${email} ${said}. ` +
          `Fix bots.${name}'s email or API key ` +
          `(or download a fresh zuliprc from Settings → Bots), and check that the bot is active.`;
  } else {
    result.problem = describe(me.reason);
  }
  if (me.status === "fulfilled" && settings.status === "rejected") {
    result.problem = `could not read the server's version: ${describe(settings.reason)}`;
  }
  if (sandbox) result.problem ??= outgoingAccountProblem(name, bot, sandbox.control);
  if (result.problem !== undefined) return result;
  result.problem = await namedProblems(client, named, source);
  if (result.problem !== undefined) result.settingsOnly = true;
  return result;
}

/** The named settings that name nothing the bot sees, one located line each; undefined when none. */
async function namedProblems(
  client: ReturnType<typeof createClient>,
  named: readonly NamedEntry[],
  source: ConfigSource,
): Promise<string | undefined> {
  try {
    const unseen = await unseenNames(client, named);
    if (unseen.length === 0) return undefined;
    return formatProblems(unseen.map((e) => source.problem(e.path, unseenProblem(e))));
  } catch (err) {
    return `could not read the channels, groups, users and snippets to check the ones its settings name: ${describe(err)}`;
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

const HEADER = ["bot", "user id", "email", "is_bot", "server version", "feature level", "server lacks"];

/** The table, then one summary line. Cells the check could not learn show "-". */
export function formatChecks(checks: readonly BotCheck[]): string {
  const rows = checks.map((c) => [
    c.name,
    c.userId === undefined ? "-" : String(c.userId),
    c.email,
    c.isBot === undefined ? "-" : c.isBot ? "yes" : "no",
    c.version ?? "-",
    c.featureLevel === undefined ? "-" : String(c.featureLevel),
    c.featureLevel === undefined ? "-" : missingFeatures(c.featureLevel).join(", ") || "nothing",
  ]);
  const failing = checks.filter((c) => c.problem !== undefined);
  const people = checks.filter((c) => c.isBot === false).map((c) => c.name);
  const summary =
    failing.length === 0
      ? checks.length === 1
        ? "The bot is ready."
        : `All ${checks.length} bots are ready.`
      : `${notReady(failing, checks.length)}; the reasons follow on stderr.`;
  const note =
    people.length > 0
      ? `\nNote: ${people.join(", ")} sign${people.length === 1 ? "s" : ""} in as a person, not a bot account; this works, but the server treats the messages as that person's.`
      : "";
  return `${table([HEADER, ...rows]).join("\n")}\n\n${summary}${note}${sharedAccountNotes(checks)}${unreachableNotes(checks)}\n`;
}

/** The failing bots in words: those that cannot run, and those whose settings name what they cannot see. */
function notReady(failing: readonly BotCheck[], of: number): string {
  const names = failing.filter((c) => c.settingsOnly).length;
  const cannot = failing.length - names;
  const naming =
    names === 1
      ? "has settings naming a channel, group, user or snippet it cannot see"
      : "have settings naming a channel, group, user or snippet they cannot see";
  if (names === 0) return `${cannot} of ${of} bots cannot run`;
  if (cannot === 0) return `${names} of ${of} bots ${naming}`;
  return `${cannot} of ${of} bots cannot run, and ${names} ${naming}`;
}

/** Bots whose inbound webhooks no listener serves: the config has no `http`. */
function unreachableNotes(checks: readonly BotCheck[]): string {
  return checks
    .filter((c) => c.unreachableWebhooks !== undefined)
    .map(
      (c) =>
        `\nNote: ${c.name} declares inbound webhooks (${c.unreachableWebhooks!.join(", ")}), but the config has no http: listener, so they cannot be reached: add http: { listen: "127.0.0.1:8080" }.`,
    )
    .join("");
}

/**
 * Bots with commands that sign in as one account: one daemon runs them as one (src/bot/commands/
 * shared-account.ts); run by two, each would answer the other's commands as unknown.
 */
function sharedAccountNotes(checks: readonly BotCheck[]): string {
  const byAccount = new Map<string, BotCheck[]>();
  for (const c of checks) {
    if (!c.commands || c.userId === undefined) continue;
    const key = `${c.url} ${c.userId}`;
    byAccount.set(key, [...(byAccount.get(key) ?? []), c]);
  }
  return [...byAccount.values()]
    .filter((bots) => bots.length > 1)
    .map((bots) => {
      const names = bots.map((b) => b.name);
      const list = `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
      return `\nNote: ${list} sign in as one account (${bots[0]!.email}) and have commands: run by one daemon they answer as one (\`help\` and typos of commands from ${names[0]}); run by two, each would answer the other's commands as unknown.`;
    })
    .join("");
}

/** What `bothost check` learned about one bot. Never holds the API key. */
export interface BotCheck {
  name: string;
  email: string;
  url: string;
  userId?: number;
  isBot?: boolean;
  version?: string;
  featureLevel?: number;
  /** Why this bot cannot run as configured; undefined when it can. */
  problem?: string;
  /** The problem is only its settings naming what it cannot see: it runs, those parts of it fail. */
  settingsOnly?: true;
  /** The server rejected the bot's credentials (a 401). */
  authFailed: boolean;
  /** The embedded sandbox has no account for its email: a mistake in the config. */
  noAccount?: true;
  /** Its setup declares commands. */
  commands?: boolean;
  /** The inbound webhooks its setup declares, when the config has no listener to serve them. */
  unreachableWebhooks?: string[];
}

/** Calls are short and retried once: a check should answer in seconds, even when a server is down. */
const CALL = { timeoutMs: 10_000, retry: { maxAttempts: 2, baseDelayMs: 250 } } as const;

/** The features worth naming to a bot author: what calls or helpers stop working below the level. */
const described: readonly { feature: FeatureName; name: string }[] = [
  { feature: "usersByEmail", name: "user lookup by email" },
  { feature: "playgrounds", name: "code playgrounds" },
  { feature: "typingToChannel", name: "typing notifications in channels" },
  { feature: "scheduledMessages", name: "scheduled messages" },
  { feature: "scheduledMessagesEditEndpoint", name: "editing scheduled messages" },
  { feature: "savedSnippets", name: "saved snippets" },
  { feature: "usersByRealEmail", name: "user lookup by real email" },
  { feature: "emptyTopicValid", name: "empty topic names" },
  { feature: "savedSnippetsEdit", name: "editing saved snippets" },
  { feature: "messageReport", name: "message reports" },
  { feature: "channelFolders", name: "channel folders" },
  { feature: "userGroupBotsAllowed", name: "bots updating user groups" },
];

/** The features a server at `featureLevel` lacks, oldest requirement first, as `"<name> (FL <level>)"`. */
export function missingFeatures(featureLevel: number): string[] {
  return described
    .map(({ feature, name }) => ({ name, level: featureLevels[feature] }))
    .filter(({ level }) => featureLevel < level)
    .sort((a, b) => a.level - b.level)
    .map(({ name, level }) => `${name} (FL ${level})`);
}
