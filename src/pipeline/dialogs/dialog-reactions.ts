/**
 * Reactions as answers: a question asked with emoji choices (`choices: { approve: "check" }`)
 * is answered by a reaction with one of them on the question's message, from a person who may
 * answer it (never the bot: its own reactions are the buttons), before its deadline. The first
 * such reaction (by event order) is the answer; later ones, and reactions taken off, change
 * nothing. Waiting questions are found by their message id.
 */
import type { AnyEvent } from "../../wire/events.ts";
import type { Message } from "../../wire/records.ts";
import { allows, type Membership } from "./ask-options.ts";
import { emojiIdentity } from "./button-codes.ts";
import type { DialogEntry } from "./dialog-entry.ts";

/** A reaction added to a message. */
export interface Reaction {
  messageId: number;
  userId: number;
  name: string;
  /** Its emoji's identity (`reaction_type:emoji_code`, see button-codes.ts), when the event carries it. */
  code?: string;
}

export class Buttons {
  readonly #byQuestion = new Map<number, DialogEntry>();
  /**
   * Questions sent whose log is not kept yet (their buttons being added): message id → dialog,
   * and the key of the conversation the question was asked in.
   */
  readonly #sent = new Map<number, { entry: DialogEntry; conversation: string }>();
  /**
   * Presses read on waiting questions (a new queue's catch-up, a kept question's read-back) and
   * handed on, whose runs are not over: by message, user, reaction type and emoji code.
   */
  readonly #handed = new Set<string>();
  /** Presses the current queue's catch-up handed on, by the same key: the queue may bring them too. */
  readonly #caught = new Set<string>();

  constructor(
    private readonly who: () => Membership,
    private readonly now: () => number,
    private readonly wanted: (() => void) | undefined,
    private readonly selfId: (() => number | undefined) | undefined = undefined,
    /** False when no reaction reaches the bot (an outgoing-webhook bot): its questions get no buttons. */
    readonly pressable = true,
  ) {}

  /** `entry` is known: found by its question's message id while that question takes reactions. */
  put(entry: DialogEntry): void {
    this.#unsent(entry);
    const at = buttonsOf(entry);
    if (at === null || at <= 0 || entry.head.react === undefined) return;
    this.#byQuestion.set(at, entry);
    this.wanted?.();
  }

  drop(entry: DialogEntry): void {
    this.#unsent(entry);
    const at = buttonsOf(entry);
    if (at !== null && this.#byQuestion.get(at) === entry) this.#byQuestion.delete(at);
  }

  /**
   * Question `messageId` of `entry` was sent with emoji choices, its log not kept yet: a reaction
   * on it meanwhile (an approver quick to click) waits for the log, then answers (see {@link sending}).
   */
  sent(messageId: number, entry: DialogEntry, conversation: string): void {
    this.#sent.set(messageId, { entry, conversation });
  }

  /**
   * The dialog whose waiting question `reaction` would answer, while an end of it is under way
   * (its run's question kept meanwhile): the press waits for the end (see `matched`).
   */
  ending(reaction: Reaction): DialogEntry | undefined {
    const entry = this.#byQuestion.get(reaction.messageId);
    if (entry?.ending === undefined || !entry.waiting) return undefined;
    return this.#valueOf(entry, reaction) === undefined ? undefined : entry;
  }

  /** The dialog whose question `messageId` was sent and is not yet kept, if any. */
  sending(messageId: number): DialogEntry | undefined {
    return this.#sent.get(messageId)?.entry;
  }

  /**
   * The key of the conversation where the question on message `messageId` takes its answers,
   * when it takes reactions (waiting, or sent with its log not kept yet): a press there is
   * ordered with the messages typed there, so that the first answer by the server's order wins.
   */
  placeOf(messageId: number): string | undefined {
    return this.#byQuestion.get(messageId)?.head.conversation ?? this.#sent.get(messageId)?.conversation;
  }

  #unsent(entry: DialogEntry): void {
    for (const [id, sent] of this.#sent) if (sent.entry.id === entry.id) this.#sent.delete(id);
  }

  /** The message ids of the questions that wait for a reaction. */
  waiting(): number[] {
    const ids: number[] = [];
    for (const [id, entry] of this.#byQuestion) if (entry.waiting) ids.push(id);
    return ids;
  }

  /**
   * `press` (from {@link pressOn}) is about to be handed on: the function to call once its run is
   * over; undefined when a copy handed on before has not run yet (the question still waits for
   * it), and this one must not be: a press is taken once, however many read-backs find it.
   */
  handOn(press: AnyEvent): (() => void) | undefined {
    const key = pressKey(press);
    if (this.#handed.has(key)) return undefined;
    this.#handed.add(key);
    return () => this.#handed.delete(key);
  }

  /**
   * A new queue's catch-up begins: the presses the previous one read are forgotten (no later
   * queue brings them). Each press it hands on is then marked with {@link caughtUp}.
   */
  newQueue(): void {
    this.#caught.clear();
  }

  /** `press`, read by the current queue's catch-up, was handed on (see {@link seenLive}). */
  caughtUp(press: AnyEvent): void {
    this.#caught.add(pressKey(press));
  }

  /**
   * Whether `reaction`, brought live by the queue, is a press its catch-up read and handed on
   * already (made between the queue's registration and the catch-up's read, the queue brings it
   * too): it must not run again. A press taken off is forgotten, so that one put back runs.
   */
  seenLive(reaction: AnyEvent): boolean {
    const caught = this.#caught.delete(pressKey(reaction));
    return caught && (reaction as { op?: unknown }).op === "add";
  }

  /** Whether `reaction` would answer a waiting question (nothing is taken). */
  answers(reaction: Reaction): boolean {
    return this.#choice(reaction) !== undefined;
  }

  /**
   * The entry whose waiting question `reaction` answers, and the choice it names, taken (as
   * `Dialogs.match` takes an answer); undefined when it answers nothing (an ordinary event).
   */
  take(reaction: Reaction): { entry: DialogEntry; value: string } | undefined {
    const found = this.#choice(reaction);
    if (found === undefined) return undefined;
    found.entry.running = true;
    return found;
  }

  #choice(reaction: Reaction): { entry: DialogEntry; value: string } | undefined {
    const entry = this.#byQuestion.get(reaction.messageId);
    if (entry === undefined || !entry.waiting) return undefined;
    const value = this.#valueOf(entry, reaction);
    return value === undefined ? undefined : { entry, value };
  }

  /** The choice `reaction` names on `entry`'s question, if it may answer it. */
  #valueOf({ head }: DialogEntry, reaction: Reaction): string | undefined {
    // The bot's own reactions are the buttons it put there, whoever else may answer.
    if (reaction.userId === this.selfId?.()) return undefined;
    const value = head.react?.[reaction.name] ?? pressedAs(head, reaction.code);
    const may = head.from ? allows(head.from, reaction.userId, this.who()) : reaction.userId === head.userId;
    return value === undefined || !may || this.now() >= head.deadline ? undefined : value;
  }
}

/**
 * The first reaction on `message` (as the server read it back) that answers its waiting question,
 * as the reaction event a queue would have brought; undefined when none does.
 */
export function pressOn(buttons: Buttons, message: Message): AnyEvent | undefined {
  for (const r of message.reactions ?? []) {
    const code = emojiIdentity(r.reaction_type, r.emoji_code);
    if (!buttons.answers({ messageId: message.id, userId: r.user_id, name: r.emoji_name, code })) continue;
    const event = {
      type: "reaction",
      op: "add",
      message_id: message.id,
      user_id: r.user_id,
      emoji_name: r.emoji_name,
      emoji_code: r.emoji_code,
      reaction_type: r.reaction_type,
    };
    return event as never;
  }
  return undefined;
}

/** A press's identity: message, user, reaction type and emoji code (a person holds one of each). */
function pressKey(press: AnyEvent): string {
  const r = press as {
    message_id?: unknown;
    user_id?: unknown;
    reaction_type?: unknown;
    emoji_code?: unknown;
  };
  return `${r.message_id}/${r.user_id}/${r.reaction_type}/${r.emoji_code}`;
}

/**
 * The choice of the button whose emoji is `code` though named otherwise (pressed under another
 * name of that emoji); undefined when no button's code is known to be it.
 */
function pressedAs(head: DialogEntry["head"], code: string | undefined): string | undefined {
  if (code === undefined || head.rc === undefined) return undefined;
  const name = Object.keys(head.rc).find((n) => head.rc?.[n] === code);
  return name === undefined ? undefined : head.react?.[name];
}

/** The message the waiting question's buttons are on: the question, or the refusal that asked it again. */
const buttonsOf = ({ head }: DialogEntry): number | null => head.btn ?? head.asked;

/** What {@link nameOf} reads names from: the bot's users cache. */
interface Names {
  peek(id: number): { full_name?: string } | undefined;
  get(id: number): Promise<{ full_name?: string } | undefined>;
}

/** The name of user `id` who reacted, as the users cache knows it, else read (one call), else `user <id>`. */
export function nameOf(users: Names | undefined, id: number): string | Promise<string> {
  const cached = users?.peek(id)?.full_name;
  if (cached !== undefined || users === undefined) return cached ?? `user ${id}`;
  return users.get(id).then(
    (u) => u?.full_name ?? `user ${id}`,
    () => `user ${id}`,
  );
}
