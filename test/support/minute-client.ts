/**
 * A sandbox allowing `email` one call a minute, and that account's client planning with the same,
 * both on a held manual clock: the tests of which lane a waiting call starts from read the order
 * the sandbox took the calls in.
 */
import { type Client, createClient } from "../../src/api/create-client.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { ManualClock } from "./manual-clock.ts";

export async function oneCallAMinute(
  email: string,
): Promise<{ clock: ManualClock; sandbox: Sandbox; client: Client }> {
  const clock = new ManualClock(1_750_000_000_000);
  const sandbox = await startSandbox({ clock });
  sandbox.control.setUserRateLimit(email, [
    [60, 1],
    [3600, 2000],
  ]);
  const client = createClient({
    url: sandbox.url,
    email,
    apiKey: sandbox.control.apiKeyOf(email),
    clock,
    rateLimit: { perMinute: 1 },
  });
  return { clock, sandbox, client };
}
