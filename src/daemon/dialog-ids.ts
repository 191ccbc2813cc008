/**
 * The form of a dialog's id, as `bothost dialogs` lists it: a number, or `s` and 12 hex digits for
 * one a bot started (`ctx.startDialog`). Checked by the CLI before it asks the daemon, and by the
 * daemon's route.
 */
const DIALOG_ID = /^(\d{1,20}|s[0-9a-f]{12})$/;

/** Undefined when `id` has a dialog id's form; else what is wrong with it. */
export function dialogIdProblem(id: string): string | undefined {
  if (DIALOG_ID.test(id)) return undefined;
  return `"${id.slice(0, 40)}" is no dialog id: a dialog's id is a number, or s and 12 hex digits for one the bot started (see bothost dialogs)`;
}
