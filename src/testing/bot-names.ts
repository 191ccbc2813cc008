/**
 * The names and accounts of the bots `runBot` runs now on each sandbox. Two bots by one name, or
 * by two names on one account (`<name>-bot@sandbox.example`, or one `email` given twice), would
 * be one account with two queues: each message answered twice. A stopped bot's name and account
 * are free again; the bot itself takes them back at its `start()`, unless another holds them.
 */
import type { Sandbox } from "../sandbox/types.ts";
import { kitError } from "./kit-arguments.ts";

/** One bot's claim on its name and account, taken while it runs. */
export interface NameHold {
  /** Take both (`where`: the call, for the refusal), or throw when another bot holds either. */
  take(where: "runBot" | "start"): void;
  release(): void;
}

interface Holder {
  name: string;
  hold: NameHold;
}

/** Per sandbox, the holder of each `name:<name>` and `email:<email>`. */
const held = new WeakMap<Sandbox, Map<string, Holder>>();

export function nameHold(sandbox: Sandbox, name: string, email: string): NameHold {
  const taken = held.get(sandbox) ?? new Map<string, Holder>();
  held.set(sandbox, taken);
  const keys = [`name:${name}`, `email:${email}`];
  const hold: NameHold = {
    take(where) {
      const first = where === "runBot";
      const byName = taken.get(keys[0]!);
      const byAccount = taken.get(keys[1]!);
      if (byName !== undefined && byName.hold !== hold) {
        const fix = first ? "stop() it first, or give this one another name" : "stop() it first";
        throw kitError(
          `${where}: ${first ? "a bot" : "another bot"} named "${name}" already runs on this sandbox, and two would both answer every message to ${email}: ${fix}`,
        );
      }
      if (byAccount !== undefined && byAccount.hold !== hold) {
        const fix = first ? "stop() it first, or give this one another email" : "stop() it first";
        throw kitError(
          `${where}: the bot "${byAccount.name}" already runs on this sandbox as ${email}, and two bots on one account would both answer every message to it: ${fix}`,
        );
      }
      for (const key of keys) taken.set(key, { name, hold });
    },
    release() {
      for (const key of keys) if (taken.get(key)?.hold === hold) taken.delete(key);
    },
  };
  return hold;
}
