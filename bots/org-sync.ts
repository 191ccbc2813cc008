/**
 * org-sync: keeps the organization's settings as declared in YAML, idempotently. At start, and
 * whenever a user joins or changes role or a user group changes, it reads the organization's
 * state (one register call), plans what is missing or different, and applies only that: a second
 * run changes nothing. It only adds; it never deletes folders, playgrounds, domains or members.
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
 */
import { type BaseContext, defineBot } from "bothost";
import { applyAction } from "./org-sync/apply.ts";
import { readOrgState } from "./org-sync/org-state.ts";
import { describeAction, planSync } from "./org-sync/plan.ts";
import { OrgSyncSettings } from "./org-sync/settings.ts";

type Ctx = BaseContext<OrgSyncSettings>;

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

    async function sync(ctx: Ctx, reason: string): Promise<void> {
      const plan = planSync(settings, await readOrgState(ctx.api, ctx.signal));
      const dryRun = settings.dry_run;
      for (const note of plan.notes) ctx.log.warn({ reason }, `org-sync: ${note}`);
      let failed = 0;
      for (const action of plan.actions) {
        const line = `org-sync${dryRun ? " (dry run)" : ""}: ${describeAction(action)}`;
        if (dryRun) {
          ctx.log.info({ reason, action: action.kind, dryRun }, line);
          continue;
        }
        try {
          await applyAction(ctx.api, action, ctx.signal);
          ctx.log.info({ reason, action: action.kind }, line);
        } catch (err) {
          failed++;
          ctx.log.error({ reason, action: action.kind, err }, `${line} failed: ${(err as Error).message}`);
        }
      }
      const n = plan.actions.length;
      const summary =
        n === 0
          ? "org-sync: nothing to change"
          : dryRun
            ? `org-sync: ${n} change(s) planned (dry run: nothing was changed)`
            : `org-sync: ${n - failed} of ${n} change(s) applied`;
      ctx.log.info({ reason, planned: n, failed, dryRun }, summary);
    }

    bot.onStart((ctx) => requestSync(ctx, "start"));

    if (settings.group_membership.length > 0) {
      bot.on("realm_user", async (ctx) => {
        const { op, person } = ctx.event;
        // New people, and changes that can make someone match a rule; not avatars or names.
        const relevant = op === "add" || (op === "update" && ("role" in person || person.is_active === true));
        if (relevant) await requestSync(ctx, `realm_user ${op}`);
      });
      bot.on("user_group", (ctx) => requestSync(ctx, `user_group ${String(ctx.event.op)}`));
    }
  },
});
