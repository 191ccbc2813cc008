/**
 * The helpers a bot's contexts share (`ctx.snippets`, `ctx.users`, `ctx.typing`, `ctx.report`,
 * and the limit checks of `ctx.send`; what each adds to a context is in context-helpers.ts). Caches cost nothing until first used; they stay fresh from
 * events only if the queue receives their types (`bot.track(…)` in setup).
 */
import type { Logger } from "pino";
import { reserveTold } from "../api/budget-waits.ts";
import type { Client } from "../api/create-client.ts";
import type { SendMessageParams } from "../api/resources/messages.ts";
import type { ServerInfo } from "../api/server-info.ts";
import type { StateStore } from "../state/state-store.ts";
import { type Clock, realClock } from "../time/clock.ts";
import type { ServerEvent } from "../wire/events.ts";
import { type ContextHelpers, type TrackedHelper, trackedEventTypes } from "./context-helpers.ts";
import { type LongMessagePolicy, sendWithinLimits } from "./limits/split-content.ts";
import { LocalEcho } from "./local-echo.ts";
import { MessageReporter } from "./report/message-reporter.ts";
import { keptUserIds } from "./schedule/recipient-ids.ts";
import type { RecipientLookups } from "./schedule/resolve-recipient.ts";
import { SnippetCache } from "./snippets/snippet-cache.ts";
import { contextTyping } from "./typing/context-typing.ts";
import { ChannelIds } from "./typing/typing-helper.ts";
import { TypingTracker, type TypingTrackerOptions } from "./typing/typing-tracker.ts";
import { SystemBots } from "./users/system-bots.ts";
import { UserCache } from "./users/user-cache.ts";
import { UserGroups } from "./users/user-groups.ts";

export interface BotServicesOptions {
  name: string;
  client: Client;
  /** The root store; reports are claimed under `<name>/reports`. */
  store: StateStore;
  log: Logger;
  /** Whether the bot's queue receives events of `type`. */
  receives: (type: string) => boolean;
  /** Default `split`. */
  longMessages?: LongMessagePolicy;
  clock?: Clock;
  /** Told each time a send whose answer was lost is shown stored by its local echo. */
  onEcho?: () => void;
  /** Makes the store's writes so far survive a kill -9 (report claims are committed before the call). */
  commit?: () => Promise<void>;
}

/**
 * One bot's shared helper state, made by its runtime: told of each (re)registration, and fed
 * every event before the bot's handlers see it.
 */
export class BotServices {
  /** Matches the bot's own message events to the sends that carried a local id. */
  readonly echo: LocalEcho;
  /** The server's system bots, learnt at each registration that fetched `realm_user`. */
  readonly systemBots = new SystemBots();
  readonly #o: BotServicesOptions;
  readonly #clock: Clock;
  // The helpers are made on first use: a daemon holds one set per bot, and most bots use few.
  #snippets: SnippetCache | undefined;
  #users: UserCache | undefined;
  #lookups: RecipientLookups | undefined;
  #groups: UserGroups | undefined;
  #reporter: MessageReporter | undefined;
  #channels: ChannelIds | undefined;
  #tracker: TypingTracker | undefined;
  /** What the tracker is made from (at the first registration), on the first typing event or query. */
  #trackerOptions: TypingTrackerOptions | undefined;
  #server: ServerInfo | undefined;
  #registrations = 0;
  readonly #typingTracked: () => boolean;

  constructor(options: BotServicesOptions) {
    this.#o = options;
    this.#clock = options.clock ?? realClock;
    this.echo = new LocalEcho(this.#clock);
    this.#typingTracked = this.#tracked(
      "typing",
      "nobody ever shows as typing to who() and isTyping()",
      "warn",
    );
  }

  /**
   * `ctx.schedule`'s lookups: a channel name or an email the caches know costs no request; an
   * email's id, once found, is kept an hour (recipient-ids.ts).
   */
  get lookups(): RecipientLookups {
    this.#lookups ??= keptUserIds(
      {
        channelId: (name, signal) => this.channels.resolve(name, signal),
        renamed: (name) => this.channels.renamedFrom(name),
        userId: async (email) => (await this.users.get(email))?.user_id,
      },
      this.#clock,
    );
    return this.#lookups;
  }

  get snippets(): SnippetCache {
    const { client } = this.#o;
    this.#snippets ??= new SnippetCache({
      api: client.savedSnippets,
      tracked: this.#tracked(
        "snippets",
        "the cache is reloaded every minute instead of kept fresh from them",
      ),
      featureLevel: () => client.featureLevel,
      clock: this.#clock,
    });
    return this.#snippets;
  }

  get users(): UserCache {
    this.#users ??= new UserCache({
      api: this.#o.client.users,
      tracked: this.#tracked(
        "users",
        "cached users are re-fetched after a minute instead of kept fresh from them",
      ),
      realmHost: () => URL.parse(this.#server?.realmUrl ?? "")?.host,
      clock: this.#clock,
    });
    return this.#users;
  }

  /** The organization's user groups, when the queue receives `user_group` events. */
  get groups(): UserGroups {
    this.#groups ??= new UserGroups(
      this.#tracked("groups", "ctx.groups knows no group (members() is undefined, has() false)", "warn"),
    );
    return this.#groups;
  }

  get reporter(): MessageReporter {
    const { client, store, name, log } = this.#o;
    this.#reporter ??= new MessageReporter({
      messages: client.messages,
      store: store.namespace(name).namespace("reports"),
      log,
      clock: this.#clock,
      ...(this.#o.commit ? { commit: this.#o.commit } : {}),
      budgetSlot: (signal) => reserveTold(client.budget.of("POST", "/messages/0/report"), signal),
    });
    return this.#reporter;
  }

  get channels(): ChannelIds {
    this.#channels ??= new ChannelIds(this.#o.client.channels);
    return this.#channels;
  }

  /** Whether the queue receives a helper's events; the first "no" logs how to fix it. */
  #tracked(helper: TrackedHelper, consequence: string, level: "info" | "warn" = "info"): () => boolean {
    const { receives, log } = this.#o;
    let told = false;
    return () => {
      const type = trackedEventTypes[helper];
      if (receives(type)) return true;
      if (!told) {
        const fix = `call bot.track("${helper}") in setup`;
        log[level](`ctx.${helper}: the queue does not receive "${type}" events, so ${consequence}; ${fix}.`);
      }
      told = true;
      return false;
    };
  }

  /**
   * After every register: new limits; after a re-register, caches may have missed events. The
   * users and groups a registration brought (`realm_users`, `realm_user_groups`) seed their caches.
   */
  onRegistered(
    server: ServerInfo,
    self: { userId: number },
    initial: {
      realm_users?: readonly unknown[];
      realm_non_active_users?: readonly unknown[];
      realm_user_groups?: readonly unknown[];
      cross_realm_bots?: readonly unknown[];
    } = {},
  ): void {
    this.#server = server;
    if (this.#registrations++ > 0) {
      this.#snippets?.invalidate();
      this.#users?.invalidate();
    }
    if (initial.realm_users) this.users.seed(initial.realm_users, initial.realm_non_active_users);
    if (initial.realm_user_groups) this.groups.seed(initial.realm_user_groups);
    this.systemBots.learn(initial.cross_realm_bots);
    this.#trackerOptions ??= {
      expiryMs: server.typing.startedExpiryMs,
      clock: this.#clock,
      ignoreUserIds: [self.userId],
    };
  }

  /** Feed one typed event (a known type that passed its schema) to the caches. */
  observe(event: ServerEvent): void {
    switch (event.type) {
      case "saved_snippets":
        this.snippets.apply(event);
        break;
      case "realm_user":
        this.users.apply(event);
        // A deactivated user is in no group any more; the server tells only those who cannot
        // see them so (feature level 303), so the cache drops them itself.
        this.groups.deactivated(event);
        break;
      case "user_group":
        this.groups.apply(event);
        break;
      case "stream":
        this.channels.apply(event);
        break;
      case "typing":
        this.#madeTracker()?.handle(event);
        break;
      case "message": {
        const { message: m, local_message_id: local } = event;
        this.echo.arrived(local, m.id);
        if (m.stream_id !== undefined && typeof m.display_recipient === "string") {
          this.channels.learn(m.stream_id, m.display_recipient);
        }
        break;
      }
    }
  }

  /** A send whose answer was lost (`err`) was shown stored, as message `id`, by its local echo. */
  echoed(id: number, err: unknown): void {
    this.#o.log.info(
      { messageId: id, err },
      "a send's answer was lost; its own message event shows the server stored it",
    );
    this.#o.onEcho?.();
  }

  /**
   * The helpers of one context: `signal` cancels its work, its lane is the typing notices';
   * `send` is the unchecked sender; `event`: the key of the event (or job occurrence) whose run
   * this is, if any.
   */
  forContext(deps: {
    signal: AbortSignal;
    server: ServerInfo;
    selfId: number;
    send: (params: SendMessageParams) => Promise<{ id: number }>;
    event?: string | undefined;
  }): ContextHelpers {
    const { signal, server, selfId } = deps;
    // A run of an event that may have run before is told its earlier runs' reports.
    const run = deps.event === undefined ? undefined : { event: deps.event, asked: new Set<number>() };
    // A bot without a queue (outgoing-webhook mode) never calls onRegistered; its contexts tell us.
    this.#server ??= server;
    return {
      snippets: this.snippets,
      users: this.users,
      groups: this.groups,
      typing: contextTyping({
        signal,
        startedWaitMs: server.typing.startedWaitMs,
        selfId,
        client: this.#o.client,
        channels: this.channels,
        log: this.#o.log,
        clock: this.#clock,
        tracker: () => this.#typingTracker(),
      }),
      report: (messageId, type, description) =>
        this.reporter.report(messageId, type, description, {
          reportTypes: server.reportTypes,
          signal,
          ...(run ? { run } : {}),
        }),
      send: (params) =>
        sendWithinLimits(deps.send, params, {
          maxMessageLength: server.maxMessageLength,
          maxTopicLength: server.maxTopicLength,
          longMessages: this.#o.longMessages ?? "split",
        }),
    };
  }

  /** Stop the typing tracker's timers; a restarted runtime gets a new one at its next registration. */
  dispose(): void {
    this.#tracker?.dispose();
    this.#tracker = undefined;
    this.#trackerOptions = undefined;
  }

  #madeTracker(): TypingTracker | undefined {
    if (this.#tracker === undefined && this.#trackerOptions !== undefined) {
      this.#tracker = new TypingTracker(this.#trackerOptions);
    }
    return this.#tracker;
  }

  /** The bot's tracker (undefined until it has registered); warns once if it gets no events. */
  #typingTracker(): TypingTracker | undefined {
    this.#typingTracked();
    return this.#madeTracker();
  }
}
