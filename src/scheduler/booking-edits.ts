/**
 * An announcement's edits that keep its booking: a topic function naming the occurrence
 * differently, or other content (a changed text, snippet or content function), updated in place on
 * the server, then in the booking's record.
 */
import type { Logger } from "pino";
import { failpoint } from "../effects/failpoints.ts";
import { normalizeContent, normalizeTopic } from "../effects/schedule/normalize.ts";
import type { ScheduledMessage } from "../wire/records.ts";
import type { BookingRecords } from "./booking-records.ts";
import { type BookingRecord, type BookingServer, contentHash } from "./booking-server.ts";
import type { RecurringAnnouncement } from "./declarations.ts";

export interface BookingEdits {
  server: BookingServer;
  records: BookingRecords;
  log: Logger;
  emptyTopicName: () => string;
}

/** Update `sm`, the booking `rec` describes, to the topic and content `spec` gives its occurrence now. */
export async function applyEdits(
  o: BookingEdits,
  id: string,
  spec: RecurringAnnouncement,
  rec: BookingRecord,
  sm: ScheduledMessage,
): Promise<void> {
  const occurrence = new Date(rec.occurrence);
  const log = { announcement: id, occurrence: rec.occurrence };
  if (sm.type === "stream") {
    // A topic function may name the occurrence differently now (a template's edit re-books).
    const topic = o.server.topicFor(id, spec, occurrence);
    if (normalizeTopic(sm.topic, o.emptyTopicName()) !== topic) {
      await o.server.update(sm.scheduled_message_id, { topic });
      failpoint("booking-edited");
      rec = { ...rec, target: { ...rec.target, topic } };
      await o.records.save(id, rec);
      o.log.info(log, "topic changed; updated the booking");
    }
  }
  const content = await o.server.content(id, spec, occurrence);
  if (normalizeContent(sm.content) !== normalizeContent(content)) {
    await o.server.update(sm.scheduled_message_id, { content });
    failpoint("booking-edited");
    await o.records.save(id, { ...rec, target: { ...rec.target, contentHash: contentHash(content) } });
    o.log.info(log, "content changed; updated the booking");
  }
}
