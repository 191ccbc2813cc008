/**
 * Who may answer a prompt (`from`, `except`) and the answers it takes (`choices`): kept with the
 * question in the dialog's log, so that a replay and a restart mean the same.
 */
import { isAtLeast, ROLE_NAMES, type RoleName } from "../../effects/users/roles.ts";
import { optionMistake } from "./prompt-error.ts";

/** Who may answer, as the prompt's options say it. */
export type AnswerFrom = number | readonly number[] | { group: string } | { role: RoleName };

/** Who may answer, as a question's log entry keeps it (a type, not an interface: it is JSON). */
export type WaitFrom = {
  ids?: number[];
  group?: string;
  /** This role or a more privileged one. */
  role?: RoleName;
  /** Never these (e.g. the requester). */
  except?: number[];
};

/** What the bot knows of people, to tell who may answer: its group and users caches. */
export interface Membership {
  /** Whether a group has a member (`bot.track("groups")`). */
  inGroup(group: string, userId: number): boolean;
  /** A person's role, when the users cache knows them (`bot.track("users")`). */
  roleOf(userId: number): RoleName | undefined;
}

/** Knows nobody: only ids name who may answer. */
export const NOBODY_KNOWN: Membership = { inGroup: () => false, roleOf: () => undefined };

/** `from` and `except` as the log keeps them; undefined when only the asker may answer. */
export function waitFrom(
  from: AnswerFrom | undefined,
  except: readonly number[] | undefined,
): WaitFrom | undefined {
  if (from === undefined) {
    if (except !== undefined) throw optionMistake("`except` needs `from` (who may answer).");
    return undefined;
  }
  const out: WaitFrom = {};
  if (typeof from === "number") out.ids = [from];
  else if (Array.isArray(from)) out.ids = [...(from as readonly number[])];
  else {
    const { group, role } = from as { group?: unknown; role?: unknown };
    if (typeof group === "string" && group.trim()) out.group = group;
    else if (ROLE_NAMES.includes(role as RoleName)) out.role = role as RoleName;
  }
  if (Object.keys(out).length === 0 || !(out.ids ?? []).every(isUserId))
    throw optionMistake(
      `\`from\` must be a user id, a list of user ids, { group: name } with a name, or { role } with one of ${ROLE_NAMES.join(", ")}.`,
    );
  if (except !== undefined && !(Array.isArray(except) && except.every(isUserId)))
    throw optionMistake("`except` must be a list of user ids.");
  if (except !== undefined && except.length > 0) out.except = [...except];
  return out;
}

const isUserId = (id: unknown) => Number.isSafeInteger(id) && (id as number) > 0;

/** Whether `userId` may answer a question waiting for `from`. */
export function allows(from: WaitFrom, userId: number, who: Membership): boolean {
  if (from.except?.includes(userId)) return false;
  if (from.ids?.includes(userId)) return true;
  if (from.role !== undefined) return isAtLeast(who.roleOf(userId), from.role);
  return from.group !== undefined && who.inGroup(from.group, userId);
}

/**
 * Who is awaited, for people and operators: the group's name, the role, or the ids; the dialog's
 * own `person` (the requester, most often the one left out) by name.
 */
export function awaited(from: WaitFrom, person?: { id: number; name: string }): string {
  const named = (id: number) => (id === person?.id ? person.name : `user ${id}`);
  const who =
    from.group !== undefined
      ? `a member of ${from.group}`
      : from.role !== undefined
        ? `a ${from.role} or above`
        : from.ids!.map(named).join(" or ");
  return from.except?.length ? `${who} (not ${from.except.map(named).join(", ")})` : who;
}

/** A prompt's `choices`: the values, and (given as value → emoji name) the emoji → value map. */
export function choicesOf(option: readonly string[] | Readonly<Record<string, string>> | undefined): {
  list: readonly string[] | undefined;
  emoji: Record<string, string> | undefined;
} {
  if (option === undefined || Array.isArray(option))
    return { list: option as readonly string[] | undefined, emoji: undefined };
  const entries = Object.entries(option as Record<string, string>);
  const names = entries.map(([, name]) => name);
  if (
    names.some((n) => typeof n !== "string" || !/^[a-z0-9_+-]+$/.test(n)) ||
    new Set(names).size !== names.length
  )
    throw optionMistake("`choices` maps each value to a different emoji name (e.g. check).");
  return {
    list: entries.map(([value]) => value),
    emoji: Object.fromEntries(entries.map(([v, n]) => [n, v])),
  };
}

/** The question with its choices listed, numbered (each with its emoji, when it has one). */
export function withChoices(
  text: string,
  choices: readonly string[] | undefined,
  emoji?: Record<string, string>,
): string {
  if (choices === undefined) return text;
  const icon = new Map(Object.entries(emoji ?? {}).map(([name, value]) => [value, `:${name}: `]));
  return `${text}\n${choices.map((c, i) => `${i + 1}. ${icon.get(c) ?? ""}${c}`).join("\n")}`;
}

/** Check a prompt's `choices`: at least two, distinct without case, none empty. */
export function checkChoices(choices: readonly string[] | undefined): void {
  if (choices === undefined) return;
  const lower = choices.map((c) => (typeof c === "string" ? c.trim().toLowerCase() : ""));
  if (choices.length < 2 || lower.some((c) => c === "") || new Set(lower).size !== lower.length)
    throw optionMistake("`choices` must be at least two different, non-empty strings.");
}

/**
 * Refuses a question whose escape words (`back`, when it goes back at this step, and `cancel`)
 * are one of its choices, or each other: typed, such a choice would escape, never be chosen.
 */
export function checkEscapeWords(
  choices: readonly string[] | undefined,
  back?: string,
  cancel?: string,
): void {
  const word = (w: string | undefined) => w?.trim().toLowerCase();
  if (back !== undefined && word(back) === word(cancel))
    throw optionMistake(`\`back\` and \`cancel\` are the same word, "${back}": give one of them another.`);
  for (const [option, said, does] of [
    ["back", back, "asks the previous question again"],
    ["cancel", cancel, "ends the dialog"],
  ] as const) {
    const hit = said === undefined ? undefined : choices?.find((c) => plain(c) === word(said));
    if (hit !== undefined)
      throw optionMistake(
        `\`choices\` include "${hit}", the ${option} word: typed, it ${does} and chooses nothing. Give \`${option}\` another word, or ${option}: false.`,
      );
  }
}

/** Text as choices compare it: without case, spaces around, or a final period. */
const plain = (text: string) =>
  text
    .trim()
    .replace(/\s*\.$/, "")
    .toLowerCase();

/** The choice an answer names (by its text, without case, or its number), or why it names none. */
export function choiceOf(
  choices: readonly string[],
  text: string,
): { ok: true; value: string } | { ok: false; reason: string } {
  const said = plain(text);
  const byNumber = /^\d+$/.test(said) ? choices[Number(said) - 1] : undefined;
  // A choice typed as it is listed ("Later."), or without its final period ("later").
  const exact = text.trim().toLowerCase();
  const value =
    byNumber ??
    choices.find((c) => c.trim().toLowerCase() === exact) ??
    choices.find((c) => plain(c) === said);
  if (value !== undefined) return { ok: true, value };
  return { ok: false, reason: `answer one of ${choices.map((c, i) => `${i + 1} (${c})`).join(", ")}` };
}
