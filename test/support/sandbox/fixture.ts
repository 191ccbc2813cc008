/**
 * Test fixtures: a fresh sandbox per test (torn down after), callers that speak HTTP to it with
 * undici as a given account, and the response recorder behind the OpenAPI shape check.
 */

import { request } from "undici";
import { test as base, expect } from "vitest";
import { startSandbox } from "../../../src/sandbox/start-sandbox.ts";
import type { ResponseRecord, Sandbox, SandboxOptions } from "../../../src/sandbox/types.ts";
import { checkResponses } from "./openapi-shapes.ts";

export const OWNER = "owner@sandbox.example";
export const MEMBER = "member@sandbox.example";
export const BOT = "bot@sandbox.example";

/** Every response the sandboxes of this test file produced, checked against the spec at the end. */
export const recorded: ResponseRecord[] = [];

/**
 * The shape check of this file's responses: run after each test file by the setup file
 * (test/support/per-file.ts), which also empties {@link recorded} before the file starts.
 */
export function checkRecordedShapes(): void {
  if (recorded.length === 0) return;
  const report = checkResponses(recorded);
  if (!report) return;
  console.info(
    `openapi shapes: ${report.checked} responses on ${report.endpoints.size} endpoints checked` +
      ` (${report.undocumented} with a status the spec does not document)`,
  );
  const mismatches = `responses that do not match the API description:\n${report.failures.join("\n")}`;
  expect(report.failures, mismatches).toEqual([]);
}

export interface Reply {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
  body: any;
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

type Form = Record<string, unknown>;

/** Form values: strings go raw, everything else JSON-encoded (as the server expects). */
export function encode(form: Form = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(form)) {
    if (v === undefined) continue;
    params.set(k, typeof v === "string" ? v : JSON.stringify(v));
  }
  return params.toString();
}

export class Caller {
  constructor(
    private readonly base: string,
    readonly headers: Record<string, string> = {},
  ) {}

  async send(method: string, path: string, form?: Form, query?: Form, signal?: AbortSignal): Promise<Reply> {
    const qs = query ? `?${encode(query)}` : "";
    const hasBody = form !== undefined && method !== "GET";
    const res = await request(`${this.base}/api/v1${path}${qs}`, {
      method: method as "GET",
      headers: {
        ...this.headers,
        ...(hasBody ? { "content-type": "application/x-www-form-urlencoded" } : {}),
      },
      body: hasBody ? encode(form) : undefined,
      signal,
    });
    const text = await res.body.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: res.statusCode, body, text, headers: res.headers };
  }

  get(path: string, query?: Form, signal?: AbortSignal) {
    return this.send("GET", path, undefined, query, signal);
  }
  post(path: string, form: Form = {}) {
    return this.send("POST", path, form);
  }
  patch(path: string, form: Form = {}) {
    return this.send("PATCH", path, form);
  }
  delete(path: string, form: Form = {}) {
    return this.send("DELETE", path, form);
  }

  /** POST /register with the minimal bot form plus `extra`; returns the body. */
  async register(extra: Form = {}): Promise<Reply["body"]> {
    const reply = await this.post("/register", {
      client_capabilities: { notification_settings_null: true },
      ...extra,
    });
    expect(reply.status, reply.text).toBe(200);
    return reply.body;
  }
}

export function basicAuth(email: string, key: string): string {
  return `Basic ${Buffer.from(`${email}:${key}`).toString("base64")}`;
}

export interface SandboxFixture {
  sandbox: Sandbox;
  /** A caller authenticated as `email`, with a bot-like User-Agent unless told otherwise. */
  as(email: string, userAgent?: string): Caller;
  /** A caller with no Authorization header. */
  anon: Caller;
}

export function fixtureFor(sandbox: Sandbox): SandboxFixture {
  return {
    sandbox,
    as: (email, userAgent = "ZulipTsBot/1.0") =>
      new Caller(sandbox.url, {
        authorization: basicAuth(email, sandbox.control.apiKeyOf(email)),
        "user-agent": userAgent,
      }),
    anon: new Caller(sandbox.url),
  };
}

/** Start a sandbox that records responses for the shape check. */
export function recordingSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  return startSandbox({ ...options, onResponse: (r) => recorded.push(r) });
}

export const test = base.extend<{ sandboxOptions: SandboxOptions; sb: SandboxFixture }>({
  sandboxOptions: {},
  sb: async ({ sandboxOptions }, use) => {
    const sandbox = await recordingSandbox(sandboxOptions);
    await use(fixtureFor(sandbox));
    await sandbox.stop();
  },
});

export { expect };
