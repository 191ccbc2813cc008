// The baseline of the queue rows: the least any client can do with the same events. It registers
// a queue, long-polls GET /events, parses each body with JSON.parse and notes when it saw each
// message event, acknowledging with the next poll; a 429 waits as the server asks. `paced`: polls
// spaced as the server's budget requires, by the same two token buckets as bothost's pacing at
// the default limits (an hour: 1,800 polls, 100 at once; a minute: 50 at once, then 130 a
// minute), so its lag is what the budget alone costs. `unpaced`: a poll as soon as the last is
// answered (a real server would refuse it within the first seconds; the bench's exempts it).
// Usage: node bare-queue-loop.mjs URL paced|unpaced EVENTS TIMES_FILE
// Writes each event's time (epoch ms, by message index) to TIMES_FILE as float64, prints
// "dispatch MS CPU_US" (first event to last, as bench/e2e/queue-bot.mjs) and "done N", and waits
// to be killed (the bench reads its CPU time first).
import { writeFileSync } from "node:fs";
import { request } from "undici";

const [url, mode, total, file] = [process.argv[2], process.argv[3], Number(process.argv[4]), process.argv[5]];
const email = mode === "paced" ? "paced@bench.example" : "unlimited@bench.example";
const auth = `Basic ${Buffer.from(`${email}:key`).toString("base64")}`;
const times = new Float64Array(total);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Two token buckets: [rate per ms, burst], the hour's then the minute's.
const shapes = [
  [1800 / 3_600_000, 100],
  [130 / 60_000, 50],
];
const tokens = shapes.map(([, burst]) => burst);
let at = performance.now();
function take() {
  const t = performance.now();
  let wait = 0;
  shapes.forEach(([rate, burst], i) => {
    tokens[i] = Math.min(burst, tokens[i] + (t - at) * rate) - 1;
    if (tokens[i] < 0) wait = Math.max(wait, Math.ceil(-tokens[i] / rate));
  });
  at = t;
  return wait;
}

const reg = await request(`${url}/api/v1/register`, {
  method: "POST",
  headers: { authorization: auth, "content-type": "application/x-www-form-urlencoded" },
  body: "event_types=%5B%22message%22%5D",
});
const { queue_id: queue } = await reg.body.json();
let last = -1;
let seen = 0;
let first;
while (seen < total) {
  if (mode === "paced") {
    const wait = take();
    if (wait > 0) await sleep(wait);
  }
  const res = await request(`${url}/api/v1/events?queue_id=${queue}&last_event_id=${last}`, {
    headers: { authorization: auth },
  });
  const text = await res.body.text();
  if (res.statusCode === 429) {
    await sleep(Number(res.headers["retry-after"]) * 1000);
    continue;
  }
  const { events } = JSON.parse(text);
  for (const event of events) {
    if (event.type === "message") {
      const now = performance.now();
      times[event.message.id - 1_000_000] = performance.timeOrigin + now;
      if (seen === 0) first = [now, process.cpuUsage()];
      if (++seen === total) {
        const cpu = process.cpuUsage(first[1]);
        process.stdout.write(`dispatch ${now - first[0]} ${cpu.user + cpu.system}\n`);
      }
    }
    last = event.id;
  }
}
writeFileSync(file, times);
process.stdout.write(`done ${seen}\n`);
setInterval(() => {}, 60_000);
