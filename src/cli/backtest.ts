import { ApiError } from "../api/errors.ts";
import type { NarrowTerm } from "../api/resources/messages.ts";
import { parseDuration } from "../config/duration.ts";
import { ExitCode } from "../config/exit-codes.ts";
import type { BotConfig } from "../config/schema.ts";
import type { BacktestReport } from "../daemon/backtest.ts";
import { commandArgs, configOption, decimalValue, reportStartupError, table, usageError } from "./args.ts";

export const backtestHelp = `Usage: bothost backtest BOT [options]

Runs BOT's handlers over the history of its channels, capturing every write (replies, reports,
reactions, bookings) instead of making it, and prints what it would have done: each message it
would have acted on (id, link, sender, rule, action) and totals per rule. The server receives
reads only (and one register for the bot's identity, its queue deleted at once).

Options:
      --channel NAME  A channel to read (repeat for several). Default: everything the bot
                      receives (all public channels and its direct messages with
                      all_public_streams: true)
      --since AGE     Messages sent within this age, like 30d or 12h (default 30d)
      --from ID       Messages from this id on, instead of --since
      --limit N       At most N messages, the newest of the range (default 50000)
      --json          Print the report as JSON
  -c, --config FILE   The config file (default: $BOTHOST_CONFIG, else ./bothost.yaml)
  -h, --help          Show this text

A handler names the rule behind an action by logging it: ctx.log.info({ rule: "flood" }, …) or
{ rules: [...] }. A progress bar is drawn on a terminal (stderr), never when piped.
`;

const usage = (message: string) => usageError("backtest", message);

export async function runBacktestCommand(argv: string[]): Promise<number> {
  const args = commandArgs(
    "backtest",
    argv,
    backtestHelp,
    {
      ...configOption,
      channel: { type: "string", multiple: true },
      since: { type: "string" },
      from: { type: "string" },
      limit: { type: "string" },
      json: { type: "boolean" },
    },
    true,
  );
  if (typeof args === "number") return args;
  const { values, positionals } = args;
  if (positionals.length !== 1) return usage("name exactly one bot of the config");
  const name = positionals[0]!;
  if (values.since !== undefined && values.from !== undefined)
    return usage("give --since or --from, not both");
  const ageMs = parseDuration(values.since ?? "30d");
  if (ageMs === undefined || ageMs <= 0)
    return usage(`--since ${values.since}: give an age like 30d, 12h or 90m`);
  const fromId = values.from === undefined ? undefined : decimalValue(values.from);
  if (values.from !== undefined && !(fromId !== undefined && Number.isSafeInteger(fromId) && fromId > 0)) {
    return usage(`--from ${values.from}: give a message id (a positive whole number)`);
  }
  const limit = values.limit === undefined ? 50_000 : decimalValue(values.limit);
  if (!(limit !== undefined && Number.isSafeInteger(limit) && limit > 0)) {
    return usage(`--limit ${values.limit}: give a positive whole number`);
  }
  try {
    // Loaded once the arguments are known good: --help and a usage error need none of it.
    const [{ loadBots }, { loadConfigWithSource, resolveConfigPath }, { backtest }, { displayPath }] =
      await Promise.all([
        import("../bot/load-bots.ts"),
        import("../config/load-config.ts"),
        import("../daemon/backtest.ts"),
        import("../config/config-source.ts"),
      ]);
    const path = resolveConfigPath({ flag: values.config });
    const { config, source } = await loadConfigWithSource(path);
    const c = config.bots[name];
    if (!c) return usage(`no bot "${name}" in ${path} (its bots: ${Object.keys(config.bots).join(", ")})`);
    if (c.server.url === "sandbox") {
      process.stderr.write(onEmbeddedSandbox(name, path, c, (p) => displayPath(p, process.cwd())));
      return ExitCode.ConfigInvalid;
    }
    const [bot] = await loadBots(config, source, { only: new Set([name]) });
    const narrows: NarrowTerm[][] = values.channel
      ? values.channel.map((channel) => [{ operator: "channel", operand: channel }])
      : c.all_public_streams
        ? [[{ operator: "channels", operand: "public" }], [{ operator: "is", operand: "dm" }]]
        : [[]];
    const bar = progressBar(process.stderr);
    const report = await backtest({
      bot: bot!,
      url: c.server.url,
      apiKey: c.api_key!,
      range: {
        narrows,
        limit,
        ...(fromId !== undefined ? { fromId } : { since: Math.floor((Date.now() - ageMs) / 1000) }),
      },
      onProgress: (phase, done, total) =>
        phase === "fetch" ? bar.note(`fetching history: ${done} messages`) : bar.update(done, total!),
    });
    bar.done();
    process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
    return ExitCode.Ok;
  } catch (err) {
    // A --channel the server cannot read (a typo, a channel that is not there): the operator's mistake.
    if (values.channel && err instanceof ApiError && err.code === "BAD_NARROW")
      return usage(`--channel ${values.channel.join(", ")}: the server refused it: ${err.msg}`);
    return reportStartupError(err, "backtest");
  }
}

/**
 * Why a bot on the embedded sandbox cannot be backtested, and what to do instead. That sandbox
 * lives inside the process running the bots (`bothost demo`, `dev` or `run`): no other process
 * can reach it, and its messages go when that process stops. A sandbox of its own
 * (`bothost sandbox`) serves any process and writes each account's zuliprc, which gives a
 * backtest the bot's key and the sandbox's address.
 */
function onEmbeddedSandbox(
  name: string,
  configPath: string,
  c: BotConfig,
  shown: (path: string) => string,
): string {
  const org = c.server.sandbox?.org;
  return [
    `bothost backtest: bot "${name}" runs on the embedded sandbox (server.url: sandbox in ${shown(configPath)}), which lives inside the process running the bots (bothost demo, dev or run): no other process can read its messages, and they are gone when it stops.`,
    "Backtest against a server that keeps them: your chat server, or a sandbox of its own. For the latter:",
    `  bothost sandbox --org ${org === undefined ? "ORG.yaml" : shown(org)} --zuliprc-dir .sandbox   (keep it running; post on its chat page, /chat/)`,
    `  then a config here for the backtest, its bot with no server and with zuliprc: .sandbox/${c.email}.zuliprc`,
    ...(org === undefined
      ? ["  (ORG.yaml: an org file with the bot's account; see docs/reference/sandbox.md)"]
      : []),
    'See "Backtest on the sandbox" in docs/guide/moderation.md.',
    "",
  ].join("\n");
}

export function formatReport(r: BacktestReport): string {
  const range = r.from ? ` from ${r.from} to ${r.to}` : "";
  const acted = r.findings.filter((f) => f.actions.length > 0).length;
  const failed = r.findings.filter((f) => f.error !== undefined).length;
  const lines = [
    `${r.bot}: ${r.scanned} messages${range}; would act on ${acted}${failed ? `; handler failed on ${failed}` : ""}.`,
  ];
  if (r.findings.length > 0) {
    const head = ["ID", "LINK", "SENDER", "RULE", "ACTION"];
    const rows = r.findings.flatMap((f) => {
      const does = f.error !== undefined ? [`handler failed: ${f.error}`] : [];
      const actions = [...f.actions.map((a) => a.does), ...does];
      return actions.map((action, i) =>
        i === 0
          ? [String(f.id), f.link, f.sender, f.rules.join(", ") || "-", action]
          : ["", "", "", "", action],
      );
    });
    lines.push("", ...table([head, ...rows]));
  }
  const totals = Object.entries(r.totals).sort((a, b) => b[1] - a[1]);
  if (totals.length > 0) {
    const w = Math.max(...totals.map(([rule]) => rule.length));
    lines.push("", "Messages per rule:", ...totals.map(([rule, n]) => `  ${rule.padEnd(w)}  ${n}`));
  }
  return `${lines.join("\n")}\n`;
}

/**
 * A one-line progress bar on a terminal: redrawn in place at most every 100 ms, erased when done.
 * On anything but a terminal (a pipe, a file) it draws nothing, so piped output stays clean.
 */
const WIDTH = 30;
const EVERY_MS = 100;

export function progressBar(stream: NodeJS.WriteStream) {
  if (!stream.isTTY) return { note(_text: string) {}, update(_done: number, _total: number) {}, done() {} };
  let last = 0;
  let drawn = false;
  const draw = (line: string, force: boolean) => {
    const now = Date.now();
    if (!force && now - last < EVERY_MS) return;
    last = now;
    drawn = true;
    stream.write(`\r\x1b[K${line.slice(0, Math.max(10, (stream.columns || 80) - 1))}`);
  };
  return {
    /** A line of text in place of the bar (a phase without a known total). */
    note: (text: string) => draw(text, false),
    update(done: number, total: number) {
      const filled = total > 0 ? Math.round((done / total) * WIDTH) : WIDTH;
      const bar = `${"█".repeat(filled)}${"░".repeat(WIDTH - filled)}`;
      draw(`${bar} ${done}/${total} messages`, done === total);
    },
    done() {
      if (drawn) stream.write("\r\x1b[K");
    },
  };
}
