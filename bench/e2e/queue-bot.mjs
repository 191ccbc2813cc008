// The bot of the queue rows: a handler that notes when it saw each message event (epoch ms, by
// message index). Once it has seen BENCH_EVENTS of them it writes those times to BENCH_TIMES
// (float64), prints "dispatch MS CPU_US" (from its first event to its last: the time, and the
// process's CPU time, all threads, by process.cpuUsage) and "done N"; the bench reads the
// process's CPU time and kills it.
import { writeFileSync } from "node:fs";

const total = Number(process.env.BENCH_EVENTS);
const file = process.env.BENCH_TIMES;

export default {
  events: ["message"],
  setup(bot) {
    const times = new Float64Array(total);
    let seen = 0;
    let first;
    bot.on("message", (ctx) => {
      const now = performance.now();
      times[ctx.event.message.id - 1_000_000] = performance.timeOrigin + now;
      if (seen === 0) first = [now, process.cpuUsage()];
      if (++seen === total) {
        const cpu = process.cpuUsage(first[1]);
        writeFileSync(file, times);
        process.stdout.write(`dispatch ${now - first[0]} ${cpu.user + cpu.system}\n`);
        process.stdout.write(`done ${seen}\n`);
      }
    });
  },
};
