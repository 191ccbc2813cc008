/** Every route of the sandbox, merged by path (several files may serve one path). */
import type { Faults } from "../faults.ts";
import type { Route } from "../http/router.ts";
import { scheduledMessageRoutes } from "../scheduler.ts";
import { eventsRoutes } from "./events.ts";
import { messageEditRoutes } from "./message-edit.ts";
import { messageRoutes } from "./messages.ts";
import { reactionRoutes } from "./reactions.ts";
import { realmRoutes } from "./realm.ts";
import { reportRoutes } from "./report.ts";
import { streamRoutes } from "./streams.ts";
import { userGroupRoutes } from "./user-groups.ts";
import { userRoutes } from "./users.ts";

export function allRoutes(faults: Faults): Route[] {
  const list: Route[] = [
    ...eventsRoutes(faults),
    ...messageRoutes,
    ...messageEditRoutes,
    ...reactionRoutes,
    ...userRoutes,
    ...streamRoutes,
    ...scheduledMessageRoutes,
    ...reportRoutes,
    ...userGroupRoutes,
    ...realmRoutes,
  ];
  const merged = new Map<string, Route>();
  for (const r of list) {
    const key = r.segments.join("/");
    const existing = merged.get(key);
    if (existing) Object.assign(existing.methods, r.methods);
    else merged.set(key, { segments: r.segments, methods: { ...r.methods } });
  }
  // Literal segments win over patterns: sort routes so that, position by position, literals come first.
  return [...merged.values()].sort((a, b) => specificity(b) - specificity(a));
}

function specificity(r: Route): number {
  return r.segments.reduce(
    (acc, s, i) => acc + (s.startsWith("{") ? 0 : 2 ** (10 - i)) + (s.endsWith(":int}") ? 2 ** (9 - i) : 0),
    0,
  );
}
