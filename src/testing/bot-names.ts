/**
 * The names of the bots `runBot` runs now on each sandbox. Two bots by one name would be one
 * account (`<name>-bot@sandbox.example`) with two queues: each message answered twice. A stopped
 * bot's name is free again; the bot itself takes it back at its `start()`, unless another holds it.
 */
import type { Sandbox } from "../sandbox/types.ts";
import { kitError } from "./kit-arguments.ts";

/** One bot's claim on its name, taken while it runs. */
export interface NameHold {
  /** Take the name (`where`: the call, for the refusal), or throw when another bot holds it. */
  take(where: "runBot" | "start"): void;
  release(): void;
}

const held = new WeakMap<Sandbox, Map<string, NameHold>>();

export function nameHold(sandbox: Sandbox, name: string, email: string): NameHold {
  const names = held.get(sandbox) ?? new Map<string, NameHold>();
  held.set(sandbox, names);
  const hold: NameHold = {
    take(where) {
      const holder = names.get(name);
      if (holder === undefined) names.set(name, hold);
      else if (holder !== hold) {
        const other = where === "runBot" ? "a bot" : "another bot";
        const fix = where === "runBot" ? "stop() it first, or give this one another name" : "stop() it first";
        throw kitError(
          `${where}: ${other} named "${name}" already runs on this sandbox, and two would both answer every message to ${email}: ${fix}`,
        );
      }
    },
    release() {
      if (names.get(name) === hold) names.delete(name);
    },
  };
  return hold;
}
