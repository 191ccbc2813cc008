/** A bot's dialogs on a memory store, for tests of the dialogs' index and timers. */
import pino from "pino";
import { Dialogs } from "../../src/pipeline/dialogs/dialogs.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";
import type { Clock } from "../../src/time/clock.ts";

export function memoryDialogs(clock: Clock): Dialogs {
  return new Dialogs({
    store: new MemoryStore().namespace("dialogs"),
    commit: async () => {},
    clock,
    log: pino({ level: "silent" }),
    persist: true,
  });
}
