/**
 * The effect records of a dialog's replay (a message's run with `incoming.dialog`): the records its
 * log carries, matched effect for effect (the code may have changed), made anew past them after
 * the dialog's latest answer or question, and sent where the dialog's conversations moved.
 */
import type { EffectRecord, EffectRecords } from "../../effects/effect-records.ts";
import type { SendEffects } from "../context-types.ts";
import { effectsKeyOf, freshEffectsOf, readBackOf } from "../event-fields.ts";
import type { Incoming } from "../incoming.ts";
import type { DialogRecord } from "./dialog-record.ts";
import { replayedEffects } from "./nested-effects.ts";

/** The records of message `id`'s run that replays `dialog`. */
export function replayEffects(
  records: EffectRecords,
  incoming: Incoming,
  dialog: DialogRecord,
  id: number,
  rerun: boolean,
): SendEffects {
  const carried = (incoming.letter?.effects ?? replayedEffects(dialog)) as unknown as EffectRecord[];
  const { after, since } = readBackOf(incoming.event, id);
  const run = records.run(effectsKeyOf(id, dialog.rewinds), rerun, carried, true);
  const [moves, fresh] = [dialog.moves, freshEffectsOf(dialog, carried)];
  const rewound = dialog.rewound as unknown as EffectRecord[] | undefined;
  const replay = { ...(fresh && { fresh }), ...(moves?.length && { moves }), ...(rewound && { rewound }) };
  return { run, after, since, ...replay };
}
