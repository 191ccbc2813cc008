import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ApiError } from "../../../src/api/errors.ts";
import type { BotApi } from "../../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../../src/bot/define-bot.ts";
import { defaultOrg } from "../../../src/sandbox/org/default-org.ts";
import { startSandbox } from "../../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../../src/sandbox/types.ts";
import { type BotDaemon, requestsSince, startBots } from "../../support/bot-daemon.ts";

const BOT = "bot@sandbox.example";
const MEMBER = "member@sandbox.example";
const quiet = { setup: (bot: BotApi) => void bot.on("message", () => {}) } as BotDefinition;

let sandbox: Sandbox | undefined;
let running: BotDaemon | undefined;
const dirs: string[] = [];

afterEach(async () => {
  await running?.stop();
  running = undefined;
  await sandbox?.stop();
  sandbox = undefined;
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function start(org = defaultOrg(), stateDir?: string) {
  sandbox ??= await startSandbox({ heartbeatSeconds: 1, org });
  running = await startBots(
    sandbox,
    { mod: { email: BOT, definition: quiet } },
    stateDir ? { stateDir } : {},
  );
  return { ctx: running.context(), sandbox };
}

const spam = (s: Sandbox, content = "buy cheap watches") =>
  s.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "sales", content }).id;
const reportsPosted = (s: Sandbox) =>
  s.control.messages().filter((m) => String(m.content).includes("reported a message sent by"));
const reportCalls = (s: Sandbox, from: number) =>
  requestsSince(s, from).filter((r) => r.startsWith("POST /messages/") && r.endsWith("/report"));

describe("ctx.report", () => {
  it("reports a message once: a second call, even concurrent, is a duplicate without a request", async () => {
    const { ctx, sandbox: s } = await start();
    const id = spam(s);
    const mark = s.control.requests.length;
    const results = await Promise.all([
      ctx.report(id, "spam", "same link in 5 channels"),
      ctx.report(id, "spam", "same link in 5 channels"),
      ctx.report(id, "norms"),
    ]);
    expect(results.filter((r) => r.reported)).toHaveLength(1);
    expect(results.filter((r) => !r.reported)).toEqual([
      { reported: false, reason: "duplicate" },
      { reported: false, reason: "duplicate" },
    ]);
    expect(reportCalls(s, mark)).toEqual([`POST /messages/${id}/report`]);
    expect(await ctx.report(id, "spam")).toEqual({ reported: false, reason: "duplicate" });
    expect(reportsPosted(s)).toHaveLength(1);
  });

  it("checks the type against the server's report types, and needs a description for other", async () => {
    const { ctx, sandbox: s } = await start();
    const id = spam(s);
    const mark = s.control.requests.length;
    await expect(ctx.report(id, "rude")).rejects.toMatchObject({
      code: "REPORT_INVALID",
      message:
        'Report type "rude" is not offered by this server; use one of: spam, harassment, inappropriate, norms, other.',
    });
    await expect(ctx.report(id, "other", "   ")).rejects.toMatchObject({
      code: "REPORT_INVALID",
      message: 'Report type "other" needs a description of what is wrong; pass a non-empty description.',
    });
    await expect(ctx.report(0, "spam")).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: "ctx.report(): messageId must be a positive integer message id, got 0.",
    });
    expect(requestsSince(s, mark)).toEqual([]);
    // A refused call claims nothing: the message can still be reported.
    expect(await ctx.report(id, "other", "asks for passwords")).toEqual({ reported: true });
  });

  it("cuts the description to 1000 code points", async () => {
    const { ctx, sandbox: s } = await start();
    const id = spam(s);
    expect(await ctx.report(id, "spam", "🙂".repeat(1500))).toEqual({ reported: true });
    const body = String(reportsPosted(s)[0]!.content);
    expect(body).toContain(`**Spam**. ${"🙂".repeat(999)}…\n`);
    expect(body).not.toContain("🙂".repeat(1000));
  });

  it("a message deleted before its report: gone, with no error, and gone again without a request", async () => {
    const { ctx, sandbox: s } = await start();
    const id = spam(s);
    const owner = "owner@sandbox.example";
    const auth = Buffer.from(`${owner}:${s.control.apiKeyOf(owner)}`).toString("base64");
    const deleted = await fetch(`${s.url}/api/v1/messages/${id}`, {
      method: "DELETE",
      headers: { authorization: `Basic ${auth}` },
    });
    expect(deleted.status).toBe(200);
    const mark = s.control.requests.length;
    expect(await ctx.report(id, "spam")).toEqual({ reported: false, reason: "gone" });
    expect(await ctx.report(id, "norms")).toEqual({ reported: false, reason: "gone" });
    expect(reportCalls(s, mark)).toEqual([`POST /messages/${id}/report`]);
    expect(reportsPosted(s)).toEqual([]);
  });

  it("never reports a message twice, even after a daemon restart (the claim is in the state store)", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "bothost-report-"));
    dirs.push(stateDir);
    const first = await start(defaultOrg(), stateDir);
    const id = spam(first.sandbox);
    expect(await first.ctx.report(id, "spam")).toEqual({ reported: true });
    await running!.stop();
    running = undefined;

    const second = await start(defaultOrg(), stateDir);
    const mark = second.sandbox.control.requests.length;
    expect(await second.ctx.report(id, "harassment", "again")).toEqual({
      reported: false,
      reason: "duplicate",
    });
    expect(reportCalls(second.sandbox, mark)).toEqual([]);
    expect(reportsPosted(second.sandbox)).toHaveLength(1);
  });

  it("gives a handler's re-run of the event its first run's report back; within one run, or for another event, a duplicate", async () => {
    // Reports the message named in the text (else its own) twice; the first run then fails.
    const runs: unknown[][] = [];
    const reporter = {
      setup: (bot: BotApi) =>
        void bot.on("message", async (ctx) => {
          const id = Number(/^report (\d+)$/.exec(ctx.text)?.[1] ?? ctx.event.message.id);
          runs.push([await ctx.report(id, "spam"), await ctx.report(id, "spam")]);
          if (runs.length === 1) throw new Error("fails after its report");
        }),
    } as BotDefinition;
    sandbox = await startSandbox({ heartbeatSeconds: 1 });
    running = await startBots(sandbox, { mod: { email: BOT, definition: reporter } });
    const id = spam(sandbox);
    // The retry (after the 2 s backoff) gets the first run's result: what followed the report is done.
    await expect.poll(() => runs.length, { timeout: 10_000 }).toBe(2);
    spam(sandbox, `report ${id}`);
    await expect.poll(() => runs.length, { timeout: 10_000 }).toBe(3);
    const made = { reported: true };
    const duplicate = { reported: false, reason: "duplicate" };
    expect(runs).toEqual([
      [made, duplicate],
      [{ ...made, earlier: true }, duplicate],
      [duplicate, duplicate],
    ]);
    expect(reportsPosted(sandbox)).toHaveLength(1);
  });

  it("tells a handler's re-run whose first run got no answer that its report counts as made, unconfirmed", async () => {
    const runs: unknown[] = [];
    const reporter = {
      setup: (bot: BotApi) =>
        void bot.on("message", async (ctx) => {
          runs.push(await ctx.report(ctx.event.message.id, "spam"));
        }),
    } as BotDefinition;
    sandbox = await startSandbox({ heartbeatSeconds: 1 });
    // A gateway's 504 before the server acted: the report never reached it, and cannot be read back.
    sandbox.control.failNext(1, { status: 504, paths: [/\/report$/] });
    running = await startBots(sandbox, { mod: { email: BOT, definition: reporter } });
    spam(sandbox);
    // The first run throws on the 504; its retry (after the 2 s backoff) is answered without a call.
    await expect.poll(() => runs.length, { timeout: 10_000 }).toBe(1);
    expect(runs).toEqual([{ reported: true, earlier: true, unconfirmed: true }]);
    expect(reportsPosted(sandbox)).toEqual([]);
  });

  it("warns once when the organization has no moderation request channel, then stops asking", async () => {
    const org = defaultOrg();
    org.realm = { ...org.realm, moderation_request_channel: null };
    const { ctx, sandbox: s } = await start(org);
    const a = spam(s, "one");
    const b = spam(s, "two");
    const mark = s.control.requests.length;
    expect(await ctx.report(a, "spam")).toEqual({ reported: false, reason: "disabled" });
    expect(await ctx.report(b, "spam")).toEqual({ reported: false, reason: "disabled" });
    expect(await ctx.report(a, "norms")).toEqual({ reported: false, reason: "disabled" });
    expect(reportCalls(s, mark)).toEqual([`POST /messages/${a}/report`]);
    const warnings = running!.logged("Message reporting is not enabled").filter((l) => l.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ bot: "mod", reason: "disabled" });
    expect(warnings[0]!.msg).toContain("reports are skipped until the bot restarts");
    expect(running!.logs.filter((l) => l.level === 50)).toEqual([]);
  });

  it("releases the claim after a server error, so the report can be retried", async () => {
    const { ctx, sandbox: s } = await start();
    const id = spam(s);
    // The proxy's own 503 page (not JSON), as the real server's answers while it restarts.
    s.control.failNext(1, { status: 503, paths: [/\/report$/] });
    await expect(ctx.report(id, "spam")).rejects.toMatchObject({ name: "BadResponseError", status: 503 });
    expect(await ctx.report(id, "spam")).toEqual({ reported: true });
    expect(reportsPosted(s)).toHaveLength(1);
  });

  it.each([502, 504])(
    "keeps the claim after a gateway's %i whose request the server carried out: reported once",
    async (status) => {
      const { ctx, sandbox: s } = await start();
      const id = spam(s);
      // The proxy's error body is JSON, as some gateways answer; the server made the report.
      s.control.failNext(1, {
        status,
        after: true,
        body: { message: "Gateway error" },
        paths: [/\/report$/],
      });
      await expect(ctx.report(id, "spam")).rejects.toBeInstanceOf(ApiError);
      const mark = s.control.requests.length;
      expect(await ctx.report(id, "spam")).toEqual({ reported: false, reason: "duplicate" });
      expect(reportCalls(s, mark)).toEqual([]);
      expect(reportsPosted(s)).toHaveLength(1);
    },
  );

  it("a message the bot cannot read is gone too: the claim is kept, nothing asked again", async () => {
    const { ctx, sandbox: s } = await start();
    expect(await ctx.report(999_999, "spam")).toEqual({ reported: false, reason: "gone" });
    const mark = s.control.requests.length;
    expect(await ctx.report(999_999, "spam")).toEqual({ reported: false, reason: "gone" });
    expect(reportCalls(s, mark)).toEqual([]);
  });
});
