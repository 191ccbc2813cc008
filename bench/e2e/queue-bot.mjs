// The bot of the queue rows: a handler that notes when it saw each message event (epoch ms, by
// message index). Once it has seen BENCH_EVENTS of them it writes those times to BENCH_TIMES
// (float64) and prints "done N"; the bench reads the process's CPU time and kills it.
import { writeFileSync } from "node:fs";

const total = Number(process.env.BENCH_EVENTS);
const file = process.env.BENCH_TIMES;

export default {
  events: ["message"],
  setup(bot) {
    const times = new Float64Array(total);
    let seen = 0;
    bot.on("message", (ctx) => {
      times[ctx.event.message.id - 1_000_000] = performance.timeOrigin + performance.now();
      if (++seen === total) {
        writeFileSync(file, times);
        process.stdout.write(`done ${seen}\n`);
      }
    });
  },
};
