/** Organization settings: new-user defaults, code playgrounds, allowed email domains. */
import { z } from "zod";
import { featureLevels } from "../../wire/feature-levels.ts";
import type { Params } from "../encode.ts";
import { UnsupportedFeatureError } from "../errors.ts";
import { requireFeature, supports } from "../feature-level.ts";
import type { CallOptions, ResourceContext } from "./context.ts";
import type { UserSettingsDefaults } from "./user-settings-defaults.ts";

export type { UserSettingsDefaults };

export interface PlaygroundParams {
  name: string;
  pygments_language: string;
  /** RFC 6570 template with exactly one variable, `code`, e.g. "https://play.example/?c={code}". */
  url_template: string;
}

const PlaygroundCreated = z.looseObject({ id: z.number().int() });
const DomainAdded = z.looseObject({ new_domain: z.tuple([z.number().int(), z.string()]) });

export function realmApi(ctx: ResourceContext) {
  return {
    /**
     * Change the settings new users start with (PATCH /realm/user_settings_defaults; administrators).
     *
     * @example
     * ```ts
     * await client.realm.updateUserSettingsDefaults({ color_scheme: 2, enter_sends: true, emojiset: "text" });
     * ```
     */
    async updateUserSettingsDefaults(params: UserSettingsDefaults, options: CallOptions = {}): Promise<void> {
      await ctx.request("PATCH", "/realm/user_settings_defaults", { ...params }, options);
    },

    /**
     * Add a code playground (POST /realm/playgrounds, feature level 49).
     *
     * @example
     * ```ts
     * const { id } = await client.realm.createPlayground({
     *   name: "Rust playground", pygments_language: "Rust", url_template: "https://play.rust-lang.org/?code={code}",
     * });
     * ```
     */
    async createPlayground(params: PlaygroundParams, options: CallOptions = {}) {
      requireFeature(ctx.state, "playgrounds", "Adding a code playground (POST /realm/playgrounds)");
      let wire: Params = { ...params };
      if (!supports(ctx.state, "playgroundUrlTemplate")) {
        // Before FL 196 the server took a prefix the code was appended to.
        if (!params.url_template.endsWith("{code}")) {
          throw new UnsupportedFeatureError({
            feature: "playgroundUrlTemplate",
            what: "A playground url_template with {code} anywhere but at the end",
            requiredLevel: featureLevels.playgroundUrlTemplate,
            serverLevel: ctx.state.featureLevel ?? 0,
          });
        }
        wire = {
          name: params.name,
          pygments_language: params.pygments_language,
          url_prefix: params.url_template.slice(0, -6),
        };
      }
      return ctx.request("POST", "/realm/playgrounds", wire, { ...options, schema: PlaygroundCreated });
    },

    /**
     * Allow an email domain for sign-ups (POST /realm/domains; owners only). Returns `[id, domain]`.
     *
     * @example
     * ```ts
     * const { new_domain } = await client.realm.addDomain({ domain: "example.org", allow_subdomains: false });
     * ```
     */
    async addDomain(params: { domain: string; allow_subdomains: boolean }, options: CallOptions = {}) {
      return ctx.request("POST", "/realm/domains", { ...params }, { ...options, schema: DomainAdded });
    },
  };
}

export type RealmApi = ReturnType<typeof realmApi>;
