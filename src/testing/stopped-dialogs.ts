/**
 * What the testing kit's `dialogs()` lists while the bot is stopped: the open dialogs its state
 * keeps, read as `bothost dialogs` reads them when no daemon answers.
 */
import { storedDialogsOf } from "../daemon/stored-dialogs.ts";
import type { DialogView } from "../pipeline/dialogs/dialog-entry.ts";
import { FileStore } from "../state/file-store.ts";

/** Bot `name`'s open dialogs in its state folder `stateDir`, oldest first; no daemon may hold it. */
export async function keptDialogs(stateDir: string, name: string): Promise<DialogView[]> {
  const store = await FileStore.open(stateDir);
  try {
    return (await storedDialogsOf(store, name)).dialogs;
  } finally {
    await store.close();
  }
}
