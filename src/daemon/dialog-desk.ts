/**
 * The dialogs (`ctx.prompt`) as operators see and end them through the admin routes
 * (`bothost dialogs`): each bot's open dialogs, and ending one, its person told a short note.
 */

import type { Coordinator } from "../cluster/coordinator.ts";
import { BothostError } from "../errors/bothost-error.ts";
import { noBotNamed } from "../errors/did-you-mean.ts";
import type { AdminHandlers } from "../http/admin-routes.ts";
import { type BotDialogs, noHolderWhy } from "../http/daemon-status.ts";
import type { BotRuntime } from "./bot-runtime.ts";
import { dialogIdProblem } from "./dialog-ids.ts";
import type { storedDialogsOf } from "./stored-dialogs.ts";

/** What the person is told when an operator ends their dialog and gives no note. */
export const OPERATOR_ENDED_NOTE = "An operator ended this conversation.";

/**
 * `DIALOG_STARTING` (thrown by the bot's end, dialog-ends.ts): its first question not recorded in
 * time. `DIALOG_END_PENDING` (the same): the end not landed in time, tried on.
 */
export type DialogDeskErrorCode =
  | "UNKNOWN_BOT"
  | "UNKNOWN_DIALOG"
  | "BOT_NOT_HERE"
  | "BOT_NOT_STARTED"
  | "DIALOG_STARTING"
  | "DIALOG_END_PENDING";

type Runtime = Pick<BotRuntime, "name" | "standby" | "dialogs" | "dialogsRead" | "endDialog" | "status">;

/** Bot `name`'s dialogs as the state store keeps them (stored-dialogs.ts). */
export type StoredDialogs = (name: string) => ReturnType<typeof storedDialogsOf>;

/**
 * An operator's end, made. `underWay`: a run of the dialog was under way (an answer being handled):
 * it asks no more questions, and the person is told once it is over. `nextStart`: the bot is
 * stopped here (its lease lost) and no other instance is known to run it: the end is recorded in
 * the state store, and the bot's next start (here, or on the instance that takes it) tells the
 * person; nothing of the dialog runs meanwhile.
 */
export interface DialogEnd {
  underWay?: true;
  nextStart?: true;
}

/**
 * The admin handlers for dialogs, over the daemon's bots (the array a reload changes in place).
 * A bot that has not read its dialogs here yet (its start under way, or failed before) has them
 * listed from the state store (`stored`) and none ended.
 */
export function dialogDesk(
  bots: readonly Runtime[],
  cluster: Pick<Coordinator, "holderOf" | "leasesUnread"> = {},
  stored?: StoredDialogs,
): Pick<AdminHandlers, "dialogs" | "endDialog"> {
  const find = (name: string): Runtime => {
    const runtime = bots.find((b) => b.name === name);
    if (runtime) return runtime;
    const known = bots.map((b) => b.name);
    throw new BothostError<DialogDeskErrorCode>("UNKNOWN_BOT", noBotNamed(name, known, "the running daemon"));
  };
  // Where a standby bot runs: the holder the last round of leases read, or, when none is named,
  // whether that is because no round read the leases for a ttl (a read failed, or, `leasesLate`,
  // this instance's rounds ran late) or because the last one named no other holder (the bot just
  // handed over from here, or its lease free).
  const elsewhere = (name: string): Pick<BotDialogs, "leaseHolder" | "leasesUnread" | "leasesLate"> => {
    const leaseHolder = cluster.holderOf?.(name);
    if (leaseHolder !== undefined) return { leaseHolder };
    const unread = cluster.leasesUnread?.();
    return unread === undefined ? {} : { leasesUnread: true, ...(unread.late && { leasesLate: true }) };
  };
  return {
    dialogs(name?: string): Promise<BotDialogs[]> {
      const listed = (name === undefined ? bots : [find(name)]).map(async (b): Promise<BotDialogs> => {
        if (!b.standby && !b.dialogsRead) {
          // Failed here while another instance runs it: its dialogs are that instance's.
          const leaseHolder = cluster.holderOf?.(b.name);
          if (leaseHolder !== undefined) return { bot: b.name, dialogs: [], elsewhere: true, leaseHolder };
          if (stored) return { bot: b.name, ...(await stored(b.name)), notStarted: true };
        }
        const notes = b.status.endNotes;
        return {
          bot: b.name,
          dialogs: b.dialogs(),
          ...(notes.length > 0 && { notes }),
          ...(b.standby && { elsewhere: true as const }),
          ...(!b.standby && b.status.state === "stopped" && { stopped: true as const }),
          ...(b.standby && elsewhere(b.name)),
        };
      });
      return Promise.all(listed);
    },
    async endDialog(name: string, id: string, note = OPERATOR_ENDED_NOTE): Promise<DialogEnd> {
      const runtime = find(name);
      const malformed = dialogIdProblem(id);
      if (malformed !== undefined) throw new BothostError<DialogDeskErrorCode>("UNKNOWN_DIALOG", malformed);
      // Stopped here (or never started), its lease taken by an instance known: its dialogs are that
      // instance's to end.
      const stopped = !runtime.standby && runtime.status.state === "stopped";
      const notHere = stopped || !runtime.dialogsRead;
      if (runtime.standby || (notHere && cluster.holderOf?.(name) !== undefined)) {
        const where = elsewhere(name);
        const { leaseHolder } = where;
        throw new BothostError<DialogDeskErrorCode>(
          "BOT_NOT_HERE",
          leaseHolder !== undefined
            ? `bot "${name}" runs on instance ${leaseHolder}: end its dialog there, with this command where that instance's admin socket is (its machine; on this one, an instance started from a config file of its own) or POST /admin/dialogs/${name}/${id}/end on its http.listen (should that instance be gone, an instance takes the bot: end it there then)`
            : `bot "${name}" does not run here, and no instance is known to run it now (${noHolderWhy(where)}): end its dialog where it runs, once one does`,
        );
      }
      if (!runtime.standby && !runtime.dialogsRead) {
        throw new BothostError<DialogDeskErrorCode>(
          "BOT_NOT_STARTED",
          `bot "${name}" has not started here yet (see bothost status): its dialogs wait in the state store, and are ended here once it runs: run the end again then`,
        );
      }
      // Not waiting at a question: an answer (or its deadline) is being handled, its run under way.
      const listed = runtime.dialogs().find((d) => d.id === id);
      if (!(await runtime.endDialog(id, note))) {
        throw new BothostError<DialogDeskErrorCode>(
          "UNKNOWN_DIALOG",
          `bot "${name}" has no dialog ${id} (it ended, or never began)`,
        );
      }
      if (stopped) return { nextStart: true };
      return listed !== undefined && listed.deadline === undefined ? { underWay: true } : {};
    },
  };
}
