// The many-bots bench's bot: it sees its channel's messages (every public one with
// all_public_streams) and notes, for each, its own user id, the message id and when it ran
// (Date.now(), the fast clock's when preloaded). The notes of every bot of the process are
// written to BENCH_LAG_FILE as JSON when the process exits.
import { writeFileSync } from "node:fs";

globalThis.__benchLag ??= { rows: [], hooked: false };
const shared = globalThis.__benchLag;
if (!shared.hooked) {
  shared.hooked = true;
  process.on("exit", () => writeFileSync(process.env.BENCH_LAG_FILE, JSON.stringify(shared.rows)));
}

export default {
  events: ["message"],
  setup(bot) {
    bot.on("message", (ctx) => {
      shared.rows.push([ctx.bot.userId, ctx.event.message.id, Date.now()]);
    });
  },
};
