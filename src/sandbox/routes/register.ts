/** POST /register: create a queue and return the initial state its fetch set asks for. */
import { endpoint, route } from "../http/router.ts";
import { parseRegisterParams } from "../queues/register-params.ts";
import { initialState } from "../state/initial-state.ts";
import { SANDBOX_MERGE_BASE, SANDBOX_ZULIP_VERSION } from "../version.ts";

export const registerRoutes = [
  route("/register", {
    POST: endpoint((ctx) => {
      const { core, user } = ctx;
      const reg = parseRegisterParams(core, user, ctx.params, ctx.clientName);
      const queue = core.queues.create(reg.queue, core.clock.now());
      const state = initialState(core, user, {
        fetch: reg.fetchEventTypes,
        applyMarkdown: reg.queue.applyMarkdown,
        clientGravatar: reg.queue.clientGravatar,
        includeSubscribers: reg.includeSubscribers !== "false",
        capabilities: reg.queue.capabilities,
      });
      return {
        queue_id: queue.id,
        zulip_version: SANDBOX_ZULIP_VERSION,
        zulip_feature_level: core.data.realm.feature_level,
        zulip_merge_base: SANDBOX_MERGE_BASE,
        ...state,
        last_event_id: -1,
      };
    }),
  }),
];
