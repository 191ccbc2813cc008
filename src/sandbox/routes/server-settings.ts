/** GET /server_settings: no authentication; what a client reads before logging in. */
import { endpoint, route } from "../http/router.ts";
import { SANDBOX_MERGE_BASE, SANDBOX_ZULIP_VERSION } from "../version.ts";

export const serverSettingsRoutes = [
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
