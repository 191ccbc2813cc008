/**
 * A prompt's identity in its dialog's log: its id and a fingerprint of its kind and options. A
 * replay takes a recorded step for the code's prompt when both are the same; or when the code
 * gave an `id` to a question asked without one, its text as it was; or when the code added
 * choices at the end of the question's list. Any other change stops the dialog (turn.ts).
 */
import { createHash } from "node:crypto";
import { choicesOf, type WaitFrom, withChoices } from "./ask-options.ts";
import type { AskWhere } from "./ask-where.ts";
import { cancelOf, DEFAULT_TRIES, type PromptOptions } from "./prompt-options.ts";

/** The step identity of a prompt asked with `options` (`text`: its question, counted without an id). */
export function fingerprint(
  options: PromptOptions<unknown>,
  id: string,
  text: string | undefined,
  from: WaitFrom | undefined,
  where: AskWhere | undefined,
): string {
  const schema = options.schema as { toJSONSchema?(o: object): unknown } | undefined;
  let shape: unknown = schema === undefined ? null : "opaque";
  try {
    shape = schema?.toJSONSchema?.({ unrepresentable: "any", io: "input" }) ?? shape;
  } catch {
    // A schema that cannot describe itself is matched by its presence only.
  }
  const cancel = cancelOf(options.cancel)?.word ?? null;
  const asked = [options.tries ?? DEFAULT_TRIES, cancel];
  // Who answers and what: a step asked of others, or with choices, is another step (the
  // fingerprint of a plain prompt is as it was, so that dialogs already waiting go on).
  if (from !== undefined || options.choices !== undefined)
    asked.push(JSON.stringify([from, options.choices]));
  if (where !== undefined) asked.push(JSON.stringify(where));
  const parts = JSON.stringify(["prompt", id, text ?? null, shape, ...asked]);
  return createHash("sha256").update(parts).digest("base64url").slice(0, 16);
}

/**
 * The identity under which step `step` (from 0) was recorded as `recorded`, when the code's prompt
 * (`options`, its question `question` before its choices are listed) is that step under another
 * identity: the code gave an `id` to a question asked without one (its text as it was), or added
 * choices at the end of the list (the ones recorded keep their numbers, so each answer taken
 * before means what it meant). Undefined when the prompt is another step: a choice removed,
 * renamed or moved, or any other option changed.
 */
export function recordedAs(
  recorded: { id: string; fp: string },
  step: number,
  options: PromptOptions<unknown>,
  question: string,
  from: WaitFrom | undefined,
  where: AskWhere | undefined,
): { id: string; fp: string } | undefined {
  const position = `#${step + 1}`;
  const ids = options.id === undefined || options.id === position ? [position] : [options.id, position];
  if (!ids.includes(recorded.id)) return undefined;
  // Counted with the text, as an id's absence counts it.
  const textCounted = recorded.id !== options.id || options.id === position;
  const choices = options.choices as readonly string[] | Readonly<Record<string, string>> | undefined;
  const count = choices === undefined ? 0 : Object.keys(choices).length;
  // The list as the code has it (an id given), then each shorter one, down to two choices.
  for (let kept = count; kept >= Math.min(count, 2); kept--) {
    const fewer = kept === count ? choices : firstChoices(choices, kept);
    const asked = { ...options, ...(fewer !== undefined && { choices: fewer }) };
    const { list, emoji } = choicesOf(fewer);
    const listed = textCounted ? withChoices(question, list, emoji) : undefined;
    if (fingerprint(asked, recorded.id, listed, from, where) === recorded.fp) return recorded;
  }
  return undefined;
}

/** The first `n` of `choices` (a list, or value → emoji name in its order). */
function firstChoices(
  choices: readonly string[] | Readonly<Record<string, string>> | undefined,
  n: number,
): readonly string[] | Readonly<Record<string, string>> | undefined {
  if (choices === undefined || Array.isArray(choices)) return choices?.slice(0, n);
  return Object.fromEntries(Object.entries(choices).slice(0, n));
}
