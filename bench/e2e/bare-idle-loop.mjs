// The baseline of the idle bench: the least a process can do to hold N idle bots' long polls. It
// registers N queues (4 at a time, as the daemon does by default), then keeps one GET /events
// parked per queue, polling again whenever one is answered. It prints "holding N" once every poll
// is out, then idles until killed.
// Usage: node bare-idle-loop.mjs URL N
import { request } from "undici";

const [url, n] = [process.argv[2], Number(process.argv[3])];

async function register(i) {
  const auth = `Basic ${Buffer.from(`idle-${i}@bench.example:key`).toString("base64")}`;
  const reg = await request(`${url}/api/v1/register`, {
    method: "POST",
    headers: { authorization: auth, "content-type": "application/x-www-form-urlencoded" },
    body: "event_types=%5B%22message%22%5D",
  });
  const { queue_id: queue } = await reg.body.json();
  return { auth, queue };
}

async function poll({ auth, queue }) {
  let last = -1;
  for (;;) {
    const res = await request(`${url}/api/v1/events?queue_id=${queue}&last_event_id=${last}`, {
      headers: { authorization: auth },
    });
    const { events = [] } = JSON.parse(await res.body.text());
    for (const event of events) last = event.id;
  }
}

const queues = [];
let next = 0;
await Promise.all(
  Array.from({ length: 4 }, async () => {
    while (next < n) {
      const i = next++;
      queues[i] = await register(i);
    }
  }),
);
for (const q of queues) void poll(q);
process.stdout.write(`holding ${n}\n`);
