/**
 * Store calls per dialog answer on Redis: a redis-server of the suite's own (free port, no
 * persistence), the sandbox in this process, and `bothost run` (dist/) with the steps bot
 * (bench/e2e/steps-bot.mjs) and its state in that Redis. The person asks for a dialog of `steps`
 * questions and answers each once the next question was asked and its write had a moment to land.
 * Redis's MONITOR sees every call the daemon sends (calls a script makes inside Redis are not
 * counted); a marker call from this process between answers splits them by answer, exactly
 * (Redis runs calls one at a time). Counted per answer: calls on the dialog's keys (its header
 * and log), and all the daemon's calls in that time (the delivery ledger, effect records, lease
 * renewals besides).
 */
import { startRedisBot } from "../lib/redis-bot.ts";
import { until } from "../lib/redis-monitor.ts";
import { median, sleep } from "../lib/stats.ts";

export interface DialogCallsRow {
  steps: number;
  /** Per answer but the last (which ends the dialog): calls on the dialog's keys, median and max. */
  dialogCalls: { p50: number; max: number };
  /** The last answer's (the end's) calls on the dialog's keys. */
  endCalls: number;
  /** Every call of the daemon per answer (median), and which commands the dialog's were. */
  allCalls: number;
  dialogCommands: string;
}

export interface DialogCallsResult {
  available: boolean;
  note: string;
  rows: DialogCallsRow[];
}

export async function runDialogCalls(
  options: { steps: number[] },
  say: (line: string) => void,
): Promise<DialogCallsResult> {
  const bot = await startRedisBot({ name: "steps", module: "bench/e2e/steps-bot.mjs" });
  if (!bot) {
    const note = "redis-server is not on PATH; not measured";
    say(`  dialog calls: ${note}`);
    return { available: false, note, rows: [] };
  }
  const { redis, dm } = bot;
  try {
    const rows: DialogCallsRow[] = [];
    for (const steps of options.steps) {
      const botSaid = () => bot.said().length;
      const start = botSaid();
      dm(`ask ${steps}`);
      await until(() => botSaid() === start + 1, "the bot");
      const perAnswer: { dialog: string[]; all: number }[] = [];
      for (let k = 1; k <= steps; k++) {
        // Time for the question's write to land; then a marker, the answer, and the next question.
        await sleep(300);
        const from = await redis.mark(`before answer ${k}`);
        dm(`answer ${k}`);
        await until(() => botSaid() === start + 1 + k, "the bot");
        await sleep(300);
        const daemonCalls = redis.between(from, await redis.mark(`after answer ${k}`));
        perAnswer.push({
          dialog: daemonCalls
            .filter((c) => c.args.some((a) => a.startsWith("steps:steps/dialogs/")))
            .map((c) => c.args[0]!.toLowerCase()),
          all: daemonCalls.length,
        });
      }
      const asking = perAnswer.slice(0, -1);
      const row: DialogCallsRow = {
        steps,
        dialogCalls: {
          p50: median(asking.map((a) => a.dialog.length)),
          max: Math.max(...asking.map((a) => a.dialog.length)),
        },
        endCalls: perAnswer.at(-1)!.dialog.length,
        allCalls: median(perAnswer.map((a) => a.all)),
        dialogCommands: asking.at(-1)?.dialog.join(", ") ?? "",
      };
      say(
        `  dialog calls, ${steps} questions: ${row.dialogCalls.p50} (max ${row.dialogCalls.max}) on the dialog's keys per answer [${row.dialogCommands}], ${row.endCalls} for the last; ${row.allCalls} calls of the daemon per answer in all`,
      );
      rows.push(row);
    }
    return { available: true, note: "", rows };
  } finally {
    await bot.stop();
  }
}
