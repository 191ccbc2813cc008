/**
 * GET /server_settings (no authentication), POST /register, and GET/DELETE /events following the
 * server's fetch_events step by step (see docs/internals/server-behaviour.md#the-event-queue):
 * acknowledgement errors, destructive pruning, superseding polls, heartbeats.
 */
import { SANDBOX_MERGE_BASE, SANDBOX_ZULIP_VERSION, type SandboxCore } from "../core.ts";
import type { Faults } from "../faults.ts";
import { badRequest } from "../http/api-error.ts";
import { type AuthedContext, endpoint, RawReply, route } from "../http/router.ts";
import type { EventQueue, ParkedPoll, QueuedEvent } from "../queues/event-queue.ts";
import { parseRegisterParams } from "../queues/register-params.ts";
import { initialState } from "../state/initial-state.ts";

export function eventsRoutes(faults: Faults) {
  return [
    route("/events", {
      GET: endpoint((ctx) => getEvents(ctx, faults)),
      DELETE: endpoint((ctx) => {
        const queueId = ctx.params.requiredStr("queue_id");
        ctx.core.queues.get(queueId, ctx.user.user_id);
        ctx.core.queues.delete(queueId);
        return {};
      }),
    }),
    route("/register", {
      POST: endpoint((ctx) => {
        const { core, user } = ctx;
        const reg = parseRegisterParams(core, user, ctx.params, ctx.clientName);
        const queue = core.queues.create(reg.queue, core.clock.now());
        return {
          queue_id: queue.id,
          zulip_version: SANDBOX_ZULIP_VERSION,
          zulip_feature_level: core.data.realm.feature_level,
          zulip_merge_base: SANDBOX_MERGE_BASE,
          ...initialState(core, user, reg),
          last_event_id: -1,
        };
      }),
    }),
    route("/server_settings", {
      GET: endpoint(
        ({ core }) => ({
          authentication_methods: { password: true, dev: false, email: true, ldap: false, remoteuser: false },
          external_authentication_methods: [],
          zulip_feature_level: core.data.realm.feature_level,
          zulip_version: SANDBOX_ZULIP_VERSION,
          zulip_merge_base: SANDBOX_MERGE_BASE,
          push_notifications_enabled: false,
          is_incompatible: false,
          email_auth_enabled: true,
          require_email_format_usernames: true,
          realm_url: core.url,
          realm_uri: core.url,
          realm_name: core.data.realm.name,
          realm_icon: `${core.url}/static/images/logo/zulip-icon-128x128.png`,
          realm_description: `<p>${core.data.realm.name}: a bothost sandbox.</p>`,
          realm_web_public_access_enabled: false,
        }),
        { auth: false },
      ),
    }),
  ];
}

async function getEvents(ctx: AuthedContext, faults: Faults) {
  const { core, user, params } = ctx;
  if (faults.takeHang()) {
    faults.onHang();
    return new Promise<never>(() => {});
  }
  const queueIdParam = params.str("queue_id");
  const lastEventId = params.int("last_event_id");
  const dontBlock = params.bool("dont_block") ?? false;
  const created = queueIdParam === undefined;
  let queue: EventQueue;
  if (created) {
    if (!dontBlock) throw badRequest("Missing 'queue_id' argument");
    const reg = parseRegisterParams(core, user, params, ctx.clientName);
    queue = core.queues.create(reg.queue, core.clock.now());
  } else {
    if (lastEventId === undefined) throw badRequest("Missing 'last_event_id' argument");
    queue = core.queues.get(queueIdParam, user.user_id);
    if (lastEventId < queue.newestPrunedId) {
      throw badRequest(`An event newer than ${lastEventId} has already been pruned!`);
    }
    queue.prune(lastEventId);
    if (queue.newestPrunedId !== lastEventId) throw badRequest(`Event ${lastEventId} was not in this queue`);
  }
  // A newer poll answers the parked one with whatever is queued now (maybe nothing).
  queue.finishParked();
  if (queue.events.length > 0 || dontBlock) {
    return { events: [...queue.events], ...(created ? { queue_id: queue.id } : {}) };
  }
  return park(core, ctx, queue);
}

function park(core: SandboxCore, ctx: AuthedContext, queue: EventQueue): Promise<RawReply> {
  return new Promise<RawReply>((resolve) => {
    const poll: ParkedPoll = {
      finish: (events: QueuedEvent[]) =>
        resolve(new RawReply(200, { result: "success", msg: "", events, queue_id: queue.id })),
      cut: () => ctx.req.socket.destroy(),
    };
    queue.park(poll, core.clock.now(), core.heartbeatMs(), () => {
      queue.push({ type: "heartbeat" });
      core.changed();
    });
    ctx.onClose(() => queue.disconnect(poll));
    core.changed();
  });
}
