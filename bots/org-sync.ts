/**
 * org-sync: keeps the organization's settings as declared in YAML, idempotently. At start, and
 * whenever a user joins or changes role or a user group changes, it reads the organization's
 * state (one register call), plans what is missing or different, and applies only that: a second
 * run changes nothing. It only adds; it never deletes folders, playgrounds, domains or members.
 * Changes in a burst share a sync: one within 30 s of the last a change started waits for the
 * next whole minute. Members added to a group (the bot's own adds) start none.
 *
 * Config:
 * ```yaml
 * bots:
 *   org-sync:
 *     module: ./bots/org-sync.ts
 *     email: org-sync-bot@chat.example.org    # an administrator bot; owner for email_domains
 *     api_key: ${ORG_SYNC_BOT_API_KEY}
 *     settings:
 *       dry_run: false                 # true: log the plan, change nothing
 *       user_settings_defaults:        # PATCH /realm/user_settings_defaults (new users only)
 *         color_scheme: 2              # 1 automatic, 2 dark, 3 light
 *         enter_sends: true
 *         emojiset: text
 *       channel_folders:
 *         - { name: Teams, description: "One channel per team" }
 *       playgrounds:
 *         - { name: Rust playground, pygments_language: Rust, url_template: "https://play.rust-lang.org/?code={code}" }
 *       email_domains:
 *         - { domain: example.org, allow_subdomains: false }
 *       group_membership:              # every matching active user joins the group
 *         - { group: everyone-humans }                      # all roles, no bots
 *         - { group: staff, roles: [owner, admin, moderator] }
 * ```
 * Folders need an administrator, email domains an owner; group membership needs the bot to be
 * allowed to change the group (and a server at feature level 496 or later, for bots).
 *
 * A change that failed for a passing reason (a 5xx, a timeout, a 429) is tried again after a
 * minute, doubling up to 30, within the account's call budget: the retry reads the organization
 * again, so a change whose answer failed although it was made is seen as made, not made twice.
 */
import { type BaseContext, defineBot } from "bothost";
import { applyAction } from "./org-sync/apply.ts";
import { readOrgState } from "./org-sync/org-state.ts";
import { type Action, describeAction, planSync } from "./org-sync/plan.ts";
import { actionKey, isPassing, Retries, stopsThePass } from "./org-sync/retry.ts";
import { OrgSyncSettings } from "./org-sync/settings.ts";

type Ctx = BaseContext<OrgSyncSettings>;

/** A change this soon after a change's sync began is synced at the next minute's check, not at once. */
const CHANGE_SPACING_MS = 30_000;

export default defineBot({
  settings: OrgSyncSettings,
  setup(bot, settings) {
    // One sync at a time; requests made while one runs share the single run queued after it.
    let tail: Promise<void> = Promise.resolve();
    let queued: Promise<void> | undefined;
    const requestSync = (ctx: Ctx, reason: string): Promise<void> => {
      if (queued) return queued;
      const run = tail.then(() => {
        queued = undefined;
        return sync(ctx, reason);
      });
      queued = run;
      tail = run.catch(() => {});
      return run;
    };
    const retries = new Retries();
    // Changes (a join, a group edited) are handled one at a time, each awaiting its sync: a sync
    // each would spend the account's calls on every join of a burst. So a change within
    // CHANGE_SPACING_MS of the last sync a change started waits for the minute's check, with the
    // others made meanwhile (a kill before it: the next start syncs anyway).
    let lastChangeSyncAt = Number.NEGATIVE_INFINITY;
    let changed: string | undefined;
    const syncForChange = (ctx: Ctx, reason: string): Promise<void> => {
      lastChangeSyncAt = ctx.now();
      return requestSync(ctx, reason);
    };
    const onChange = async (ctx: Ctx, reason: string): Promise<void> => {
      if (ctx.now() - lastChangeSyncAt >= CHANGE_SPACING_MS) return syncForChange(ctx, reason);
      changed ??= reason;
    };
    const when = (at: number | undefined) => `tried again at ${new Date(at ?? 0).toISOString()}`;

    async function sync(ctx: Ctx, reason: string): Promise<void> {
      const pending = retries.pending;
      const retry = reason === "retry";
      if (!retry) changed = undefined; // this sync reads what they changed
      if (retry && pending !== "all" && pending.size === 0) return; // a sync meanwhile did it
      let plan: ReturnType<typeof planSync>;
      try {
        plan = planSync(settings, await readOrgState(ctx.api, ctx.signal));
      } catch (err) {
        if (!isPassing(err, ctx.signal)) {
          retries.settle(new Map(), ctx.now(), ctx.api); // refused for good: the next sync tries
          throw err;
        }
        const at = retries.settle("all", ctx.now(), ctx.api);
        const message = (err as Error).message;
        ctx.log.warn(
          { reason, ...failureOf(err) },
          `org-sync: could not read the organization (${message}); ${when(at)}`,
        );
        return;
      }
      const dryRun = settings.dry_run;
      if (!retry) for (const note of plan.notes) ctx.log.warn({ reason }, `org-sync: ${note}`);
      const planned = new Set(plan.actions.map(actionKey));
      if (pending !== "all") {
        for (const [key, line] of pending) {
          if (!planned.has(key))
            ctx.log.info(
              { reason },
              `org-sync: ${line}: found made (by the attempt whose answer failed, or meanwhile)`,
            );
        }
      }
      // A retry tries again only what failed for a passing reason; a refused change waits for the next sync.
      const actions: Action[] =
        retry && pending !== "all" ? plan.actions.filter((a) => pending.has(actionKey(a))) : plan.actions;
      const left = new Map<string, string>();
      let applied = 0;
      let stopped = false;
      for (const action of actions) {
        const described = describeAction(action);
        const line = `org-sync${dryRun ? " (dry run)" : ""}: ${described}`;
        if (dryRun) {
          ctx.log.info({ reason, action: action.kind, dryRun }, line);
          continue;
        }
        if (stopped) {
          left.set(actionKey(action), described);
          continue;
        }
        try {
          await applyAction(ctx.api, action, ctx.signal);
          applied++;
          ctx.log.info({ reason, action: action.kind }, line);
        } catch (err) {
          const message = (err as Error).message;
          if (!isPassing(err, ctx.signal)) {
            ctx.log.error({ reason, action: action.kind, ...failureOf(err) }, `${line} failed: ${message}`);
            continue;
          }
          left.set(actionKey(action), described);
          stopped = stopsThePass(err, ctx.signal);
          ctx.log.warn(
            { reason, action: action.kind, ...failureOf(err) },
            `${line} failed for a passing reason: ${message}; read again and tried again if still missing`,
          );
        }
      }
      const at = retries.settle(left, ctx.now(), ctx.api);
      const n = actions.length;
      const summary =
        n === 0
          ? "org-sync: nothing to change"
          : dryRun
            ? `org-sync: ${n} change(s) planned (dry run: nothing was changed)`
            : `org-sync: ${applied} of ${n} change(s) applied${left.size > 0 ? `; ${left.size} ${when(at)}` : ""}`;
      ctx.log.info(
        { reason, planned: n, failed: dryRun ? 0 : n - applied, retrying: left.size, dryRun },
        summary,
      );
    }

    bot.onStart((ctx) => requestSync(ctx, "start"));
    // Each minute: the changes that waited (a whole sync, which tries again what failed too), else
    // the retry of changes that failed for a passing reason, once its time has come.
    bot.cron("* * * * *", { id: "org-sync retry" }, async (ctx) => {
      if (changed !== undefined) await syncForChange(ctx, changed);
      else if (retries.due(ctx.now())) await requestSync(ctx, "retry");
    });

    if (settings.group_membership.length > 0) {
      bot.on("realm_user", async (ctx) => {
        const { op, person } = ctx.event;
        // New people, and changes that can make someone match a rule; not avatars or names.
        const relevant = op === "add" || (op === "update" && ("role" in person || person.is_active === true));
        if (relevant) await onChange(ctx, `realm_user ${op}`);
      });
      // Members added leave nobody missing (and the bot's own adds come back as such events).
      bot.on("user_group", async (ctx) => {
        const op = String(ctx.event.op);
        if (op !== "add_members") await onChange(ctx, `user_group ${op}`);
      });
    }
  },
});

/**
 * What the log says of a failed call besides its message: the server's code and status. Not the
 * error itself, whose stack would say where in bothost the answer was read: a refusal or an
 * outage is the organization's or the server's to fix, not a fault in code.
 */
function failureOf(err: unknown): { code?: unknown; status?: unknown } {
  const { code, status } = (err ?? {}) as { code?: unknown; status?: unknown };
  return { ...(code !== undefined ? { code } : {}), ...(status !== undefined ? { status } : {}) };
}
