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
import { NoRetry } from "../../src/errors/no-retry.ts";
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
/** The builds bot's failure counters for messages, read from the daemon's /metrics over HTTP. */
async function counts(url: string | undefined) {
  const metrics = parsePrometheus(await (await request(`${url}/metrics`)).body.text());
  const of = (name: string) => sampleValue(metrics, name, { bot: "builds", type: "message" });
  return {
    attempts: of("bothost_events_failed_total"),
    deadLetters: of("bothost_dead_letters_total"),
    failedForGood: of("bothost_events_failed_for_good_total"),
  };
}
/** The builds bot of `definition` in a daemon serving /metrics; `extra`: more of its config. */
const startBuilds = (definition: typeof broken, extra = "") =>
  startGatedDaemon({
    name: "builds",
    email: "builds-bot@sandbox.example",
    fullName: "Builds",
    definition,
    extra: `handler_timeout: 1h${extra}`,
    global: "http:\n  listen: 127.0.0.1:0",
  });
afterEach(async () => {
  await closeGatedDaemon(up);
  up = undefined;
});

it("counts each failed attempt in the metric, the event once in the status, named failed for good", async () => {
  up = await startBuilds(broken, "\nretries: { attempts: 2, backoff: 1s }");
  const { running } = up;
  up.dm("deploy");
  await expect
    .poll(() => running.logged("handler failed; running it again after a pause"), { timeout: 10_000 })
    .toHaveLength(1);
  await up.clock.advance(2_000);
  await expect.poll(async () => (await running.daemon.letters.list()).length, { timeout: 10_000 }).toBe(1);
  expect(await counts(running.daemon.http!.url)).toEqual({ attempts: 2, deadLetters: 1, failedForGood: 1 });
  const status = await running.daemon.status();
  expect(status.bots[0]).toMatchObject({ failed: 1, deadLetters: 1 });
  expect(renderStatusPage(status)).toContain("<dt>failed for good</dt><dd>1</dd>");
  expect(statusHelp).not.toContain("failed handler runs");
});

const handledItself = defineBot({
  setup(bot) {
    bot.on("message", () => {
      throw new NoRetry("the request is gone; told its sender", { deadLetter: false });
    });
  },
});

it("counts an event that threw NoRetry with deadLetter: false in a metric, as the status counts it failed", async () => {
  up = await startBuilds(handledItself);
  const { running } = up;
  up.dm("deploy");
  await expect.poll(async () => (await running.daemon.status()).bots[0]?.failed, { timeout: 10_000 }).toBe(1);
  expect(await counts(running.daemon.http!.url)).toEqual({ attempts: 1, deadLetters: 0, failedForGood: 1 });
  expect(await running.daemon.letters.list()).toEqual([]);
});
