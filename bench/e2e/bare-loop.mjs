// The baseline of the end-to-end bench: the least any client can do with the same events. It
// registers a queue, then long-polls GET /events, parses each body with JSON.parse and counts the
// message events, acknowledging each batch with the next poll; it exits once it has seen them all.
// Usage: node bare-loop.mjs URL EVENTS
import { request } from "undici";

const [url, total] = [process.argv[2], Number(process.argv[3])];
const auth = `Basic ${Buffer.from("bare@bench.example:key").toString("base64")}`;
const reg = await request(`${url}/api/v1/register`, {
  method: "POST",
  headers: { authorization: auth, "content-type": "application/x-www-form-urlencoded" },
  body: "event_types=%5B%22message%22%5D",
});
const { queue_id: queue } = await reg.body.json();
let last = -1;
let seen = 0;
while (seen < total) {
  const res = await request(`${url}/api/v1/events?queue_id=${queue}&last_event_id=${last}`, {
    headers: { authorization: auth },
  });
  const { events } = JSON.parse(await res.body.text());
  for (const event of events) {
    if (event.type === "message") seen++;
    last = event.id;
  }
}
const cpu = process.cpuUsage();
process.stdout.write(`cpu ${cpu.user + cpu.system}\ndone ${seen}\n`);
process.exit(0);
