import { expect, it } from "vitest";
import type { Config } from "../../src/config/schema.ts";
import { configSecrets } from "../../src/config/secrets.ts";

it("lists every secret of a config: keys, tokens, settings' secrets, Sentinel and Redis URL passwords", () => {
  const config = {
    state: { redis: "redis://:pa%40ss-word@127.0.0.1:6379/0", prefix: "bothost" },
    http: { listen: "127.0.0.1:8080", admin_token: "admin-token-0123456789" },
    bots: {
      relay: {
        email: "relay@example.org",
        api_key: "relay-key",
        outgoing_webhook: { path: "/hook", token: "hook-token" },
        settings: {
          channel: "dev",
          verify: { type: "github", secret: "gh-secret" },
          hooks: [{ password: "pw-1" }],
        },
      },
    },
  } as unknown as Config;
  expect(configSecrets(config).sort()).toEqual(
    [
      "admin-token-0123456789",
      "gh-secret",
      "hook-token",
      "pa%40ss-word",
      "pa@ss-word",
      "pw-1",
      "relay-key",
    ].sort(),
  );
  const sentinel = {
    state: { redis: { sentinels: ["h:26379"], name: "m", password: "p1", sentinelPassword: "p2" } },
    bots: {},
  };
  expect(configSecrets(sentinel as unknown as Config).sort()).toEqual(["p1", "p2"]);
});
