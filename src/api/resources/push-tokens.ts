/** Removing legacy push registrations (deprecated since feature level 406, still served). */
import type { CallOptions, ResourceContext } from "./context.ts";

export function pushTokensApi(ctx: ResourceContext) {
  return {
    /**
     * Remove an Android push registration token (DELETE /users/me/android_gcm_reg_id).
     *
     * @example
     * ```ts
     * await client.pushTokens.removeAndroid({ token: deviceToken });
     * ```
     */
    async removeAndroid(params: { token: string }, options: CallOptions = {}): Promise<void> {
      await ctx.request("DELETE", "/users/me/android_gcm_reg_id", { ...params }, options);
    },

    /** Remove an Apple push device token (DELETE /users/me/apns_device_token). */
    async removeApns(params: { token: string }, options: CallOptions = {}): Promise<void> {
      await ctx.request("DELETE", "/users/me/apns_device_token", { ...params }, options);
    },
  };
}

export type PushTokensApi = ReturnType<typeof pushTokensApi>;
