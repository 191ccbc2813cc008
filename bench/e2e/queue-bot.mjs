// The bot of the queue rows: a handler that notes when it saw each message event (epoch ms, by
// message index). Once it has seen BENCH_EVENTS of them it writes those times to BENCH_TIMES
// (float64), prints "dispatch MS CPU_US" (from its first event to its last: the time, and the
// process's CPU time, all threads, by process.cpuUsage) and "done N"; the bench reads the
// process's CPU time and kills it.
// BENCH_HANDLER: `sync` (default), a handler that returns nothing; `async`, the same handler
// written `async` (it awaits nothing); `state`, an `async` handler that awaits a
// `ctx.state.get` (the store the daemon gives it: a file store in the bench) before noting.
import { writeFileSync } from "node:fs";

const total = Number(process.env.BENCH_EVENTS);
const file = process.env.BENCH_TIMES;
const kind = process.env.BENCH_HANDLER ?? "sync";

export default {
  events: ["message"],
  setup(bot) {
    const times = new Float64Array(total);
    let seen = 0;
    let first;
    const note = (ctx) => {
      const now = performance.now();
      times[ctx.event.message.id - 1_000_000] = performance.timeOrigin + now;
      if (seen === 0) first = [now, process.cpuUsage()];
      if (++seen === total) {
        const cpu = process.cpuUsage(first[1]);
        writeFileSync(file, times);
        process.stdout.write(`dispatch ${now - first[0]} ${cpu.user + cpu.system}\n`);
        process.stdout.write(`done ${seen}\n`);
      }
    };
    if (kind === "sync") bot.on("message", note);
    else if (kind === "async")
      bot.on("message", async (ctx) => {
        note(ctx);
      });
    else if (kind === "state")
      bot.on("message", async (ctx) => {
        await ctx.state.get("count");
        note(ctx);
      });
    else throw new Error(`BENCH_HANDLER must be sync, async or state, got ${kind}`);
  },
};
