/**
 * Call budgets are the account's, as the server counts them: a bot restarted by a reload keeps
 * counting the calls its account made (its minute is not forgotten, and `/metrics` counters never
 * go down), and two bots on one account plan with one budget, the lower `rate_limit` of the two.
 */
import { writeFile } from "node:fs/promises";
import { afterEach, expect, it } from "vitest";
import { type Booted, bootDaemon } from "../../src/daemon/boot.ts";
import { botEmail, orgWithBots, startE2eSandbox, useE2eCleanup, writeConfig } from "../support/e2e-daemon.ts";
import { answers, moduleText, send, useModuleFiles } from "./module-files.ts";

useE2eCleanup();
let booted: Booted | undefined;
afterEach(async () => {
  await booted?.stop();
  booted = undefined;
});

async function boot(bots: Record<string, { email: string; extra?: string }>) {
  const sandbox = await startE2eSandbox(orgWithBots(2));
  const config = await writeConfig(sandbox, bots);
  const file = await useModuleFiles(
    config,
    Object.fromEntries(Object.keys(bots).map((name) => [name, moduleText(`${name} v1`)])),
  );
  Object.assign(process.env, config.env);
  booted = await bootDaemon(config.file, { logLevel: "warn", logDestination: { write: () => {} } });
  await booted.daemon.start();
  return { sandbox, daemon: booted.daemon, file };
}

const budgetOf = async (daemon: Booted["daemon"], bot: string) =>
  (await daemon.status()).bots.find((b) => b.name === bot)!.budget!;

it("a bot restarted by a reload keeps its account's calls of the minute and the hour", async () => {
  const { sandbox, daemon, file } = await boot({ a: { email: botEmail(0) } });
  for (let i = 0; i < 3; i++) {
    const id = send(sandbox, "c0");
    await expect.poll(() => answers(sandbox, id), { timeout: 15_000 }).toEqual([`a v1 handled ${id}`]);
  }
  const before = await budgetOf(daemon, "a");
  expect(before.other.usedMinute).toBeGreaterThanOrEqual(3);
  await writeFile(file("a"), moduleText("a v2"));
  expect(await daemon.reload()).toMatchObject({ restart: ["a"] });
  const after = await budgetOf(daemon, "a");
  expect(after.other.usedMinute).toBeGreaterThanOrEqual(before.other.usedMinute);
  expect(after.other.usedHour).toBeGreaterThanOrEqual(before.other.usedHour);
  expect(after.events.usedHour).toBeGreaterThanOrEqual(before.events.usedHour);
});

it("two bots on one account plan with one budget, the lower rate_limit", async () => {
  const { sandbox, daemon } = await boot({
    a: { email: botEmail(0), extra: "rate_limit:\n  per_minute: 150" },
    b: { email: botEmail(0), extra: "rate_limit:\n  per_minute: 120" },
  });
  const id = send(sandbox, "c0");
  await expect
    .poll(() => answers(sandbox, id).sort(), { timeout: 15_000 })
    .toEqual([`a v1 handled ${id}`, `b v1 handled ${id}`]);
  const [a, b] = [await budgetOf(daemon, "a"), await budgetOf(daemon, "b")];
  expect(a).toEqual(b);
  expect(a.other.perMinute).toBe(120);
  expect(a.other.usedMinute).toBeGreaterThanOrEqual(2);
});
