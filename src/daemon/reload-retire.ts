/**
 * A reload's old versions, halted one after another (each waits for its handlers up to the
 * shutdown timeout). A bot the reload restarts keeps its place among the daemon's bots (the
 * status, `/readyz`, the metrics) until its new version replaces it, so it is never missing: one
 * that ran here shows `reloading` from the start of its halt (not `standby`: no other instance
 * runs it); one another instance runs stays `standby`, one whose lease was lost here `stopped`.
 * A removed bot leaves once halted.
 */
import type { BotSwitch } from "../cluster/bot-switch.ts";
import type { BotRuntime } from "./bot-runtime.ts";
import type { ReloadPlan } from "./reload-plan.ts";

/** The daemon's bots as a reload halts their old versions. */
export interface OldVersions {
  bots: readonly BotRuntime[];
  switches: Map<string, BotSwitch>;
  /** Why each bot failed to start: an old version's failure is no longer its bot's state. */
  startFailures: Map<string, string>;
  /**
   * The bots this instance does not run (another one does, or their lease was lost here): they
   * show as before the reload until their new version is added.
   */
  standby: ReadonlySet<string>;
}

/**
 * Halt the old versions of `plan`'s removed and restarted bots, one after another; `drop` takes
 * a bot out of the daemon once halted, unless its new version is to replace it (`replaced`).
 */
export async function retireOldVersions(
  plan: Pick<ReloadPlan, "remove" | "restart">,
  replaced: ReadonlySet<string>,
  deadlineMs: number,
  o: OldVersions,
  drop: (name: string) => void,
): Promise<void> {
  for (const name of [...plan.remove, ...plan.restart]) {
    const kept = replaced.has(name) && !plan.remove.includes(name);
    const old = o.bots.find((b) => b.name === name);
    if (kept) o.startFailures.delete(name);
    if (kept && old && !old.standby && !o.standby.has(name)) old.reloading = true;
    await o.switches.get(name)?.retire(deadlineMs, !kept);
    // Halted for good: lease rounds and the daemon's stop leave the bot to the reload from now on.
    if (kept) o.switches.delete(name);
    else drop(name);
  }
}

/** `runtime` in place of its bot's old version (where it was listed), or listed last. */
export function replaceRuntime(bots: BotRuntime[], runtime: BotRuntime): void {
  const at = bots.findIndex((b) => b.name === runtime.name);
  bots.splice(at < 0 ? bots.length : at, at < 0 ? 0 : 1, runtime);
}
