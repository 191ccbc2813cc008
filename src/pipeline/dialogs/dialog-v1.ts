/**
 * Dialogs kept by the version before logs (one record per dialog, under its id): each is read
 * once, at the first start that finds it, and written again as a header and a log, so that a
 * dialog waiting across the upgrade goes on. Its steps have no fingerprint (`v1`): a replay
 * matches them by their question's text, as that version did.
 */
import type { JsonValue, StateStore } from "../../state/state-store.ts";
import { type DialogHead, type DialogRecord, foldLog, type LogEntry, newHead } from "./dialog-record.ts";

/** The fingerprint of a step carried over from a record of the version before logs. */
export const V1_STEP = "v1";

interface V1Record {
  v: 1;
  id: string;
  userId: number;
  userName: string;
  conversation: string;
  where: string;
  origin: JsonValue;
  startedAt: number;
  steps: {
    question: string;
    askedAt: number;
    deadline: number;
    answers: { id: number; content?: string; timestamp?: number }[];
    timedOut?: true;
  }[];
  waiting: boolean;
  values: JsonValue[];
  effects: JsonValue[];
}

/** Ids of the older version began with a digit, or `-` for a dialog the bot started. */
const V1_PREFIXES = ["-", "1", "2", "3", "4", "5", "6", "7", "8", "9"];

/**
 * Rewrite every record of the older version in `store` as a header and a log, `create` deleting
 * the record (its key `record`) in the same batch: a rewrite made once, whose reply is lost, leaves
 * no record that a later start, once the dialog's ended header has expired, would begin again.
 */
export async function migrateV1(
  store: StateStore,
  create: (head: DialogHead, entries: LogEntry[], record: string) => Promise<DialogHead>,
): Promise<void> {
  // Listed together: on Redis the ten listings go out pipelined, their round trips overlapping.
  const listed = await Promise.all(V1_PREFIXES.map((prefix) => store.list(prefix)));
  for (const found of listed) {
    for (const { key, value } of found) {
      const log = v1Log(value, key);
      // Not kept (the store failed), the record is read again at the next start. A record whose
      // last answer was not yet run waits no more: it runs at this start.
      if (log) await create(log.head, log.entries, key).catch(() => undefined);
    }
  }
}

/**
 * The dialog a dead letter kept by the version before logs carries (its `dialog`), as this
 * version's letters carry one: its replay goes on from the recorded answers. Undefined for
 * anything else.
 */
export function v1Carried(value: JsonValue | undefined): DialogRecord | undefined {
  const id = (value as { id?: unknown } | null)?.id;
  const log = typeof id === "string" ? v1Log(value, id) : undefined;
  return log && foldLog(log.head, log.entries);
}

/** The header and log entries of `value`, a record of the older version kept under `key`. */
function v1Log(
  value: JsonValue | undefined,
  key: string,
): { head: DialogHead; entries: LogEntry[] } | undefined {
  const record = value as unknown as V1Record;
  if (record?.v !== 1 || !Array.isArray(record.steps)) return undefined;
  const head = newHead({ ...record, id: key.startsWith("-") ? startedId(key) : key });
  const origin = Number((record.origin as { message?: { id?: number } })?.message?.id ?? 0);
  // The question a waiting dialog asked last was its run's last effect (the question, or a
  // refusal that asked it again): an answer is a message after it. Earlier steps are answered.
  const last = record.effects.at(-1) as { kind?: string; result?: { id?: unknown } } | undefined;
  const asked = last?.kind === "send" && typeof last.result?.id === "number" ? last.result.id : origin;
  const entries: LogEntry[] = [
    { t: "start", origin: record.origin, at: record.startedAt },
    ...record.values.map((v): LogEntry => ({ t: "val", v })),
    ...record.effects.map((fx): LogEntry => ({ t: "fx", fx })),
  ];
  record.steps.forEach((step, i) => {
    const id = `#${i + 1}`;
    entries.push({
      t: "ask",
      step: i,
      id,
      fp: V1_STEP,
      text: step.question,
      msg: i === record.steps.length - 1 && record.waiting ? asked : origin,
      at: step.askedAt,
      deadline: step.deadline,
    });
    for (const a of step.answers)
      entries.push({
        t: "ans",
        step: i,
        msg: a.id,
        text: (a.content ?? "").trim(),
        ts: a.timestamp ?? 0,
      });
    if (step.timedOut) entries.push({ t: "late", step: i, at: step.deadline });
  });
  return { head, entries };
}

/**
 * The id a dialog the bot started (`ctx.startDialog`) has now, from its id in the older version
 * (its first message's, negative): `s` and the same 6 bytes in hex, as a start with the same key
 * makes it, so that every operator's route takes it and the same start finds it begun.
 */
function startedId(old: string): string {
  return `s${(-Number(old) - 1).toString(16).padStart(12, "0")}`;
}
