// The light-traffic baseline of the busy-organization bench: a plain hand-written client that
// answers a ping, with none of a framework's work (no state, budgets, routing or retries). It
// registers a queue for message events, long-polls GET /events with undici's request(), parses
// each body with JSON.parse and answers each "ping" with POST /messages "pong <id>" (same topic).
// Usage: node bare-ping-loop.mjs URL EMAIL API_KEY
import { request } from "undici";

const [url, email, key] = process.argv.slice(2);
const auth = `Basic ${Buffer.from(`${email}:${key}`).toString("base64")}`;
const form = { authorization: auth, "content-type": "application/x-www-form-urlencoded" };
const reg = await request(`${url}/api/v1/register`, {
  method: "POST",
  headers: form,
  body: "event_types=%5B%22message%22%5D",
});
const { queue_id: queue } = await reg.body.json();
process.stdout.write("registered\n");
let last = -1;
for (;;) {
  const res = await request(`${url}/api/v1/events?queue_id=${queue}&last_event_id=${last}`, {
    headers: { authorization: auth },
  });
  const body = JSON.parse(await res.body.text());
  if (!Array.isArray(body.events)) throw new Error(`GET /events: ${res.statusCode} ${JSON.stringify(body)}`);
  const { events } = body;
  for (const event of events) {
    last = event.id;
    if (event.type !== "message" || event.message.content.replace(/<\/?p>/g, "") !== "ping") continue;
    const body = new URLSearchParams({
      type: "stream",
      to: event.message.display_recipient,
      topic: event.message.subject,
      content: `pong ${event.message.id}`,
    });
    request(`${url}/api/v1/messages`, { method: "POST", headers: form, body: body.toString() }).then((r) =>
      r.body.dump(),
    );
  }
}
