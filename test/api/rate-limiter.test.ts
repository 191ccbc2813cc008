import { describe, expect } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import { RateBucket } from "../../src/api/rate-budget.ts";
import { API_KEY, EMAIL, test } from "../support/api/client-fixture.ts";
import { ManualClock } from "../support/manual-clock.ts";

const start = 1_700_000_000_000;

describe("client-side rate limiter", () => {
  test("delays the 201st call in a minute until the first leaves the window", async ({ server }) => {
    const clock = new ManualClock(start);
    const client = createClient({ url: server.url, email: EMAIL, apiKey: API_KEY, clock });
    await Promise.all(Array.from({ length: 200 }, () => client.events.deleteQueue("q")));
    expect(server.requests).toHaveLength(200);

    const late = client.events.deleteQueue("q");
    await expect.poll(() => clock.pendingTimers).toBe(1);
    expect((clock.nextDueAt() ?? 0) - clock.now()).toBe(60_000);
    await clock.tick(59_999);
    expect(server.requests).toHaveLength(200);
    await clock.tick(1);
    await late;
    expect(server.requests).toHaveLength(201);
  });

  test("the window slides: a call waits only until the oldest call is a minute old", async ({ server }) => {
    const clock = new ManualClock(start);
    const client = createClient({
      url: server.url,
      email: EMAIL,
      apiKey: API_KEY,
      clock,
      rateLimit: { perMinute: 3 },
    });
    await client.events.deleteQueue("a");
    await clock.tick(30_000);
    await client.events.deleteQueue("b");
    await client.events.deleteQueue("c");
    const fourth = client.events.deleteQueue("d");
    await expect.poll(() => clock.pendingTimers).toBe(1);
    expect((clock.nextDueAt() ?? 0) - clock.now()).toBe(30_000);
    await clock.tick(30_000);
    await fourth;
    expect(server.requests.map((r) => r.body.queue_id)).toEqual(["a", "b", "c", "d"]);
  });

  test("waiting calls start in the order they asked; an aborted one drops out", async () => {
    const clock = new ManualClock(start);
    const limiter = new RateBucket("other", { perMinute: 2, perHour: 2000 }, clock, true);
    const order: string[] = [];
    const take = (name: string, signal?: AbortSignal) =>
      limiter.acquire(signal).then(
        () => order.push(name),
        () => order.push(`${name} aborted`),
      );
    await Promise.all([take("a"), take("b")]);
    const controller = new AbortController();
    const c = take("c", controller.signal);
    const d = take("d");
    controller.abort();
    await c;
    await clock.tick(60_000);
    await d;
    expect(order).toEqual(["a", "b", "c aborted", "d"]);
    expect(clock.now()).toBe(start + 60_000);
  });

  test("rateLimit: false never waits", async ({ server }) => {
    const clock = new ManualClock(start);
    const client = createClient({ url: server.url, email: EMAIL, apiKey: API_KEY, clock, rateLimit: false });
    await Promise.all(Array.from({ length: 250 }, () => client.events.deleteQueue("q")));
    expect(server.requests).toHaveLength(250);
    expect(clock.pendingTimers).toBe(0);
  });

  test("abort cancels a call parked in the limiter", async ({ server }) => {
    const clock = new ManualClock(start);
    const client = createClient({
      url: server.url,
      email: EMAIL,
      apiKey: API_KEY,
      clock,
      rateLimit: { perMinute: 1 },
    });
    await client.events.deleteQueue("p");
    const controller = new AbortController();
    const parked = client.events.deleteQueue("q", { signal: controller.signal });
    await expect.poll(() => clock.pendingTimers).toBe(1);
    controller.abort();
    await expect(parked).rejects.toMatchObject({ name: "AbortError" });
    expect(server.requests).toHaveLength(1);
  });
});
