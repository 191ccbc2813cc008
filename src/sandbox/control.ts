/**
 * The control API: what tests and the demo use to drive the sandbox from the inside (users,
 * clock, sends) and to break it on purpose (faults). Sends take the same path as HTTP.
 */
import { BothostError } from "../errors/bothost-error.ts";
import { someOf, suggest } from "../errors/did-you-mean.ts";
import type { SandboxCore } from "./core.ts";
import { restartEvent } from "./core.ts";
import type { Faults } from "./faults.ts";
import { Params } from "./http/params.ts";
import { DEFAULT_RATE_RULES, type RateLimiter } from "./http/rate-limit.ts";
import type { RequestLogEntry } from "./http/server.ts";
import type { SandboxMessage } from "./message-shape.ts";
import { BOT_TYPES, generateApiKey, ROLES } from "./org/build-state.ts";
import { sendFromParams } from "./routes/messages.ts";
import { deliverDueScheduled } from "./scheduler.ts";
import type { UserRecord } from "./state/data.ts";
import { messageToApi } from "./state/message-view.ts";
import { renameStream, streamByName, subscribeUsers } from "./state/streams.ts";
import { createUser, setActive, setOutgoingService, updateUser, userByDeliveryEmail } from "./state/users.ts";
import type { QueueInfo, RateRule, SandboxControl, SandboxUser } from "./types.ts";

export class SandboxControlError extends BothostError<"SANDBOX_CONTROL"> {
  constructor(message: string) {
    super("SANDBOX_CONTROL", message);
    this.name = "SandboxControlError";
  }
}

export interface ControlDeps {
  core: SandboxCore;
  faults: Faults;
  limiter: RateLimiter;
  log: RequestLogEntry[];
  runGc(): void;
  settleWebhooks(): Promise<void>;
}

/** Rules as the server takes them: at least one, each a positive window and a call count. */
function checkedRules(rules: RateRule[]): RateRule[] {
  const bad = rules.findIndex((r) => !Array.isArray(r) || !(r[0] > 0) || !Number.isInteger(r[1]) || r[1] < 1);
  if (rules.length === 0 || bad >= 0) {
    throw new SandboxControlError(
      `rate-limit rules must be [window seconds > 0, calls ≥ 1] pairs${bad >= 0 ? `; rule ${bad} is ${JSON.stringify(rules[bad])}` : ", at least one"}.`,
    );
  }
  // Applied in order of window length, so the last is the longest (the one the headers report).
  return [...rules].sort((a, b) => a[0] - b[0]);
}

function publicUser(u: UserRecord): SandboxUser {
  return {
    user_id: u.user_id,
    email: u.delivery_email,
    full_name: u.full_name,
    role: u.role,
    is_bot: u.is_bot,
    bot_type: u.bot_type,
    is_active: u.is_active,
    api_key: u.api_key,
    // An outgoing-webhook (or embedded) bot's service token: what its zuliprc's `token=` carries.
    ...(u.outgoing ? { outgoing_token: u.outgoing.token, outgoing_interface: u.outgoing.interface } : {}),
  };
}

export function createControl(deps: ControlDeps): SandboxControl {
  const { core, faults } = deps;
  const userOf = (email: string) => {
    const user = userByDeliveryEmail(core.data, email);
    if (user && !user.system_bot) return user;
    const emails = core.data.users.filter((u) => !u.system_bot).map((u) => u.delivery_email);
    const meant = suggest(email, emails);
    throw new SandboxControlError(
      `No sandbox account with email "${email}"${meant ? `: did you mean ${meant}?` : ""} (the org has ${someOf(emails)}).`,
    );
  };
  return {
    advanceClock(ms) {
      core.clock.advance(ms);
      // Before the deliveries answer the parked polls: a queue whose poll was parked through the
      // advance stayed connected all along (the server's heartbeats keep such a queue alive).
      deps.runGc();
      deliverDueScheduled(core);
      core.changed();
    },
    now: () => core.clock.now(),
    users: () => core.data.users.filter((u) => !u.system_bot).map(publicUser),
    apiKeyOf: (email) => userOf(email).api_key,
    createUser(input) {
      if (userByDeliveryEmail(core.data, input.email)) {
        throw new SandboxControlError(`An account with email "${input.email}" already exists.`);
      }
      if (input.api_key !== undefined && !/^[A-Za-z0-9]{32}$/.test(input.api_key)) {
        throw new SandboxControlError("api_key must be exactly 32 letters or digits.");
      }
      const joined = input.date_joined === undefined ? undefined : Date.parse(input.date_joined);
      if (joined !== undefined && !(joined <= core.clock.now())) {
        throw new SandboxControlError(
          `date_joined must be an ISO 8601 date no later than the sandbox clock, not "${input.date_joined}".`,
        );
      }
      const owner = input.owner ? userOf(input.owner) : undefined;
      // Every channel checked first: a refused call creates nobody.
      const streams = (input.channels ?? []).map((name) => {
        const stream = streamByName(core.data, name);
        if (!stream) throw new SandboxControlError(`No channel named "${name}".`);
        return stream;
      });
      const user = createUser(core, {
        delivery_email: input.email,
        full_name: input.full_name,
        role: ROLES[input.role ?? "member"],
        bot_type: input.bot ? BOT_TYPES[input.bot] : null,
        bot_owner_id: owner?.user_id ?? null,
        api_key: input.api_key,
        settings: input.settings,
        date_joined: joined === undefined ? undefined : new Date(joined).toISOString(),
      });
      for (const stream of streams) subscribeUsers(core, stream, [user]);
      return publicUser(user);
    },
    setActive: (email, active) => setActive(core, userOf(email), active),
    renameChannel(name, newName) {
      const stream = streamByName(core.data, name);
      if (!stream) throw new SandboxControlError(`No channel named "${name}".`);
      const problem = renameStream(core, stream, newName);
      if (problem) throw new SandboxControlError(problem.msg);
    },
    updateUser: (email, changes) =>
      updateUser(core, userOf(email), {
        role: changes.role && ROLES[changes.role],
        full_name: changes.full_name,
      }),
    setOutgoingWebhook(email, service) {
      const bot = userOf(email);
      if (bot.bot_type !== BOT_TYPES.outgoing && bot.bot_type !== BOT_TYPES.embedded) {
        throw new SandboxControlError(`"${email}" is not an outgoing-webhook or embedded bot.`);
      }
      if (!URL.canParse(service.url) || !/^https?:$/.test(new URL(service.url).protocol)) {
        throw new SandboxControlError(
          `The outgoing webhook URL must be an http(s) URL, not "${service.url}".`,
        );
      }
      if (service.token !== undefined && !/^[A-Za-z0-9]{32}$/.test(service.token)) {
        throw new SandboxControlError("An outgoing webhook token must be exactly 32 letters or digits.");
      }
      setOutgoingService(core, bot, {
        url: service.url,
        interface: service.interface ?? bot.outgoing?.interface ?? "zulip",
        token: service.token ?? bot.outgoing?.token ?? generateApiKey(),
      });
      return publicUser(bot);
    },
    sendAs(email, input) {
      const body = new Map<string, string>([
        ["type", input.type],
        ["to", typeof input.to === "string" ? input.to : JSON.stringify(input.to)],
        ["content", input.content],
      ]);
      if (input.topic !== undefined) body.set("topic", input.topic);
      if (input.readBySender !== undefined) body.set("read_by_sender", JSON.stringify(input.readBySender));
      return sendFromParams(
        core,
        userOf(email),
        new Params(body, new Map()),
        input.client ?? "sandbox-control",
      );
    },
    messages: () => structuredClone(core.data.messages) as unknown as Record<string, unknown>[],
    messageView(id) {
      const msg = core.data.messages.find((m) => m.id === id);
      if (!msg) return undefined;
      const sender = core.data.users.find((u) => u.user_id === msg.sender_id) ?? null;
      const options = { applyMarkdown: false, clientGravatar: false, allowEmptyTopicName: true };
      return structuredClone(messageToApi(core.data, msg, sender, options)) as unknown as SandboxMessage;
    },
    queues: (): QueueInfo[] =>
      core.queues.all().map((q) => ({
        queue_id: q.id,
        user_id: q.options.userId,
        email: core.data.users.find((u) => u.user_id === q.options.userId)?.delivery_email ?? "",
        event_types: q.options.eventTypes,
        narrow: q.options.narrow,
        all_public_streams: q.options.allPublicStreams,
        last_connection_time: q.lastConnectionTime,
        parked: q.parked !== null,
        pending_events: q.events.length,
      })),
    scheduled: () => structuredClone(core.data.scheduled) as unknown as Record<string, unknown>[],
    expireQueue(target) {
      const userId = typeof target === "string" ? undefined : userOf(target.email).user_id;
      for (const q of core.queues.all()) {
        if (userId === undefined ? q.id !== target : q.options.userId !== userId) continue;
        q.cutParked();
        core.queues.delete(q.id);
      }
      core.changed();
    },
    failNext: (n, options) => faults.failNext(n, options),
    delay: (ms, options) => faults.delay(ms, options?.paths, options?.methods, options?.after === true),
    delayed: () => faults.delayed,
    resetConnections: (n = 1) => faults.resetConnections(n),
    rateLimitNext: (n, retryAfter) => faults.rateLimitNext(n, retryAfter),
    hangNextPoll: () => faults.hangNextPoll(),
    restartQueues(options) {
      if (options?.featureLevel !== undefined) core.data.realm.feature_level = options.featureLevel;
      for (const q of core.queues.all()) {
        q.cutParked();
        if (q.accepts("restart")) q.push(restartEvent(core.data.realm.feature_level));
      }
      core.changed();
    },
    setRateLimit(enabled) {
      deps.limiter.enabled = enabled !== false;
      deps.limiter.rules = typeof enabled === "object" ? checkedRules(enabled.rules) : DEFAULT_RATE_RULES;
    },
    setUserRateLimit(email, rules) {
      deps.limiter.setUserRules(userOf(email).user_id, rules && checkedRules(rules));
    },
    rateLimitCount(email, bucket) {
      return deps.limiter.countOf(userOf(email).user_id, bucket);
    },
    requests: deps.log,
    settleWebhooks: () => deps.settleWebhooks(),
    waitFor(predicate, options = {}) {
      const timeoutMs = options.timeoutMs ?? 5000;
      return new Promise((resolve, reject) => {
        const check = () => {
          const value = predicate();
          if (!value) return false;
          cleanup();
          resolve(value);
          return true;
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new SandboxControlError(`waitFor: condition not met within ${timeoutMs} ms`));
        }, timeoutMs);
        const off = core.onChange(() => void check());
        const cleanup = () => {
          clearTimeout(timer);
          off();
        };
        check();
      });
    },
  };
}
