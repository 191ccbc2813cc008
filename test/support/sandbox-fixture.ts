/**
 * One sandbox per test, stopped after it together with whatever the test started on it (a
 * daemon, bots): the setup the daemon and helper tests share. Call `useSandbox` at the top of a
 * test file; it registers the beforeEach and afterEach hooks.
 */
import { afterEach, beforeEach } from "vitest";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox, SandboxOptions } from "../../src/sandbox/types.ts";
import {
  type InProcessBot,
  type InProcessDaemon,
  type InProcessOptions,
  startInProcessDaemon,
} from "../../src/testing/in-process-daemon.ts";

export interface SandboxFixture {
  /** This test's sandbox (a fresh one for each test). */
  readonly sandbox: Sandbox;
  /** Stop `running` after the test, before the sandbox; returns it. Stopping it earlier is fine. */
  stopAfter<T extends { stop(): Promise<unknown> }>(running: T): T;
  /** A daemon running `bots` against this sandbox in-process, stopped after the test. */
  daemon(bots: Record<string, InProcessBot>, options?: InProcessOptions): Promise<InProcessDaemon>;
  /** The user id of the account with this email. */
  idOf(email: string): number;
  /** The messages the account with this email sent, oldest first. */
  messagesFrom(email: string): Record<string, unknown>[];
}

export interface SandboxFixtureOptions extends SandboxOptions {
  /** Generic bot accounts to create in each sandbox (email → full name), in #general. */
  bots?: Record<string, string>;
}

export function useSandbox(options: SandboxFixtureOptions = {}): SandboxFixture {
  const { bots = {}, ...sandboxOptions } = options;
  let current: Sandbox | undefined;
  const started: { stop(): Promise<unknown> }[] = [];
  beforeEach(async () => {
    current = await startSandbox(sandboxOptions);
    for (const [email, full_name] of Object.entries(bots)) {
      current.control.createUser({
        email,
        full_name,
        bot: "generic",
        owner: "owner@sandbox.example",
        channels: ["general"],
      });
    }
  });
  afterEach(async () => {
    try {
      for (const running of started.splice(0).reverse()) await running.stop();
    } finally {
      await current?.stop();
      current = undefined;
    }
  });
  const fixture: SandboxFixture = {
    get sandbox() {
      if (!current) throw new Error("the sandbox runs only inside a test (useSandbox starts it beforeEach)");
      return current;
    },
    stopAfter(running) {
      started.push(running);
      return running;
    },
    async daemon(bots, options) {
      return fixture.stopAfter(await startInProcessDaemon(fixture.sandbox, bots, options));
    },
    idOf(email) {
      const user = fixture.sandbox.control.users().find((u) => u.email === email);
      if (!user) throw new Error(`no account ${email} in the sandbox`);
      return user.user_id;
    },
    messagesFrom(email) {
      const id = fixture.idOf(email);
      return fixture.sandbox.control.messages().filter((m) => m.sender_id === id);
    },
  };
  return fixture;
}
