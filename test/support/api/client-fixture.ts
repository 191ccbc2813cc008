/**
 * vitest fixtures: each test gets a fresh recording server and a fake clock, and a factory for
 * clients pointed at that server. Pools shared per origin are closed after each file
 * (test/support/per-file.ts).
 */
import { test as base } from "vitest";
import { type Client, type ClientOptions, createClient } from "../../../src/api/create-client.ts";
import { FakeClock } from "./fake-clock.ts";
import { startTestServer, type TestServer } from "./test-server.ts";

/** A syntactically valid API key (32 alphanumerics); tests grep output for it. */
export const API_KEY = "k3yK3yk3yK3yk3yK3yk3yK3yk3yK3y99";
export const EMAIL = "bot@chat.example.org";

type Overrides = Partial<Omit<ClientOptions, "zuliprc" | "url" | "email" | "apiKey">>;

export const test = base.extend<{
  server: TestServer;
  clock: FakeClock;
  makeClient: (overrides?: Overrides) => Client;
}>({
  // biome-ignore lint/correctness/noEmptyPattern: vitest fixtures must destructure their dependencies
  server: async ({}, use) => {
    const server = await startTestServer();
    await use(server);
    await server.close();
  },
  // biome-ignore lint/correctness/noEmptyPattern: vitest fixtures must destructure their dependencies
  clock: async ({}, use) => {
    await use(new FakeClock());
  },
  makeClient: async ({ server, clock }, use) => {
    await use((overrides = {}) =>
      createClient({
        url: server.url,
        email: EMAIL,
        apiKey: API_KEY,
        clock,
        rateLimit: false,
        ...overrides,
      }),
    );
  },
});
