/**
 * What an operator alerts on and what the status shows of one event that failed every attempt:
 * `bothost_events_failed_total` counts each attempt that threw, `bothost_dead_letters_total` and
 * the status's `failed` the event once; the status page names that count as failed for good, not
 * as failed runs. A real daemon in this process against the sandbox, its `/metrics` over real HTTP.
 */
import { request } from "undici";
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { statusHelp } from "../../src/cli/status.ts";
import { renderStatusPage } from "../../src/http/status-page.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { parsePrometheus, sampleValue } from "../support/prometheus-text.ts";

const broken = defineBot({
  setup(bot) {
    bot.on("message", () => {
      throw new Error("the build server exploded");
    });
  },
});

let up: GatedDaemon | undefined;
afterEach(async () => {
  await closeGatedDaemon(up);
  up = undefined;
});

it("counts each failed attempt in the metric, the event once in the status, named failed for good", async () => {
  up = await startGatedDaemon({
    name: "builds",
    email: "builds-bot@sandbox.example",
    fullName: "Builds",
    definition: broken,
    extra: "handler_timeout: 1h\nretries: { attempts: 2, backoff: 1s }",
    global: "http:\n  listen: 127.0.0.1:0",
  });
  const { running } = up;
  up.dm("deploy");
  await expect
    .poll(() => running.logged("handler failed; running it again after a pause"), { timeout: 10_000 })
    .toHaveLength(1);
  await up.clock.advance(2_000);
  await expect.poll(async () => (await running.daemon.letters.list()).length, { timeout: 10_000 }).toBe(1);
  const res = await request(`${running.daemon.http!.url}/metrics`);
  const metrics = parsePrometheus(await res.body.text());
  const labels = { bot: "builds", type: "message" };
  expect(sampleValue(metrics, "bothost_events_failed_total", labels)).toBe(2);
  expect(sampleValue(metrics, "bothost_dead_letters_total", labels)).toBe(1);
  const status = await running.daemon.status();
  expect(status.bots[0]).toMatchObject({ failed: 1, deadLetters: 1 });
  expect(renderStatusPage(status)).toContain("<dt>failed for good</dt><dd>1</dd>");
  expect(statusHelp).not.toContain("failed handler runs");
});
